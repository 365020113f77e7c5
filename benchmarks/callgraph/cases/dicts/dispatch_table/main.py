# Tests: functions stored as dict values and called through a subscript.


def on_paid(event):
    return f"mark {event['invoice']} paid"


def on_failed(event):
    return f"retry {event['invoice']}"


def on_refunded(event):
    return f"refund {event['invoice']}"


HANDLERS = {"invoice.paid": on_paid, "invoice.payment_failed": on_failed}


def handle_webhook(event):
    return HANDLERS[event["type"]](event)


print(handle_webhook({"type": "invoice.paid", "invoice": "in_1"}))
print(handle_webhook({"type": "invoice.payment_failed", "invoice": "in_2"}))
