# Tests: a @property returning a collaborator object whose method is then called.


class SmtpMailer:
    def __init__(self, host):
        self.host = host

    def send(self, to, subject):
        return f"smtp://{self.host} -> {to}: {subject}"


class ConsoleMailer:
    def send(self, to, subject):
        return f"console -> {to}: {subject}"


class Notifications:
    def __init__(self, host):
        self._mailer = SmtpMailer(host)

    @property
    def mailer(self):
        return self._mailer

    def invoice_overdue(self, customer):
        return self.mailer.send(customer, "Invoice overdue")


print(Notifications("mail.example").invoice_overdue("ap@acme.example"))
