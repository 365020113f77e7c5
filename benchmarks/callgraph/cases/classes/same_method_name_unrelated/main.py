# Tests: two unrelated classes and a module function all named render(); only the receiver's method is linked.


class InvoiceDocument:
    def __init__(self, number):
        self.number = number

    def render(self):
        return f"INVOICE #{self.number}"


class ReceiptDocument:
    def __init__(self, number):
        self.number = number

    def render(self):
        return f"RECEIPT #{self.number}"


def render(text):
    return text.upper()


receipt = ReceiptDocument(42)
print(receipt.render())
print(render("done"))
