# Tests: `from package import module as alias`; a sibling module's function of the same name is not linked.
from notifications import email as mail


def notify_overdue(customer):
    return mail.send(customer["email"], "Your invoice is overdue. Please pay.")


print(notify_overdue({"email": "ap@acme.example", "phone": "+1555"}))
