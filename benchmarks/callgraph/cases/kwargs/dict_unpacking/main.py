# Tests: callbacks passed inside a **dict and called under their parameter names.


def mark_paid(invoice):
    return f"{invoice} paid"


def mark_failed(invoice):
    return f"{invoice} failed"


def notify_customer(result):
    return f"email: {result}"


def process_payment(invoice, handler, notifier):
    result = handler(invoice)
    notifier(result)
    return result


options = {"handler": mark_paid, "notifier": notify_customer}
print(process_payment("in_3", **options))
