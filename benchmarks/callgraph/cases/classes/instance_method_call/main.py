# Tests: instantiation (edge to __init__) and method calls on the instance, including a self-call.


class Invoice:
    def __init__(self, lines):
        self.lines = lines

    def subtotal(self):
        return sum(qty * price for qty, price in self.lines)

    def total(self, tax_rate):
        return round(self.subtotal() * (1 + tax_rate), 2)


invoice = Invoice([(2, 9.99), (1, 25.0)])
print(invoice.total(0.2))
