# Tests: a method returns a bound method of self and the caller invokes the result.


class EventRouter:
    def on_paid(self, event):
        return f"paid {event}"

    def on_voided(self, event):
        return f"voided {event}"

    def handler_for(self, event_type):
        if event_type == "invoice.voided":
            return self.on_voided
        return self.on_paid


class AuditLog:
    def on_paid(self, event):
        return f"audit {event}"


router = EventRouter()
print(router.handler_for("invoice.paid")("in_1"))
print(router.handler_for("invoice.voided")("in_2"))
