# Tests: self.method() in a base class dispatches to the override of each instantiated subclass.


class Job:
    def run(self):
        payload = self.fetch()
        return self.handle(payload)

    def fetch(self):
        return {"source": "default"}

    def handle(self, payload):
        return f"handled {payload}"


class InvoiceReminderJob(Job):
    def fetch(self):
        return {"source": "overdue invoices"}


class CleanupJob(Job):
    def handle(self, payload):
        return "cleaned"


print(Job().run())
print(InvoiceReminderJob().run())
print(CleanupJob().run())
