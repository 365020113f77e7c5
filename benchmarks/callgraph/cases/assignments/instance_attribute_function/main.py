# Tests: a plain function stored on an instance attribute and called through it.


def send_email(recipient, body):
    return f"email to {recipient}: {body}"


def send_sms(recipient, body):
    return f"sms to {recipient}: {body}"


class Notifier:
    def __init__(self, transport):
        self.transport = transport

    def notify(self, recipient):
        return self.transport(recipient, "Your invoice is ready")


notifier = Notifier(send_sms)
print(notifier.notify("+49 151 0000"))
