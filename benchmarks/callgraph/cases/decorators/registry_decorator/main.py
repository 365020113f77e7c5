# Tests: a registering decorator, called by the module, returns the function unchanged; direct calls still hit the function.

HANDLERS = []


def register(fn):
    HANDLERS.append(fn)
    return fn


@register
def on_invoice_paid(event):
    return f"paid {event['id']}"


@register
def on_invoice_failed(event):
    return f"failed {event['id']}"


print(on_invoice_paid({"id": "in_1"}))
print(len(HANDLERS))
