# Tests: getattr() picks a handler method by name after hasattr() and callable() checks; the method is called by the dispatcher.
class InvoiceEvents:
    def on_paid(self, invoice_id):
        return f"{invoice_id} paid"

    def on_voided(self, invoice_id):
        return f"{invoice_id} voided"


def dispatch(handler, event_type, invoice_id):
    method_name = "on_" + event_type
    if not hasattr(handler, method_name):
        return None
    method = getattr(handler, method_name)
    if callable(method):
        return method(invoice_id)
    return None


events = InvoiceEvents()
print(dispatch(events, "paid", "INV-10"))
print(dispatch(events, "voided", "INV-11"))
print(dispatch(events, "refunded", "INV-12"))
