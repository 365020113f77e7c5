# Tests: raise X(...) reaches the exception class's own __init__; calls in an except clause belong to the function.
class PaymentDeclined(Exception):
    def __init__(self, invoice_id, reason):
        super().__init__(f"invoice {invoice_id} declined: {reason}")
        self.invoice_id = invoice_id
        self.reason = format_reason(reason)


def format_reason(reason):
    return reason.replace("_", " ")


def charge(invoice_id, amount):
    if amount > 500:
        raise PaymentDeclined(invoice_id, "insufficient_funds")
    return {"invoice": invoice_id, "charged": amount}


def notify_customer(error):
    return f"Sorry, {error.reason}"


def settle(invoice_id, amount):
    try:
        return charge(invoice_id, amount)
    except PaymentDeclined as error:
        return notify_customer(error)


print(settle("INV-1", 120))
print(settle("INV-2", 900))
