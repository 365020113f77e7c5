# Tests: reading a @property calls its getter; the getter's own calls are its edges.


class Invoice:
    def __init__(self, lines, tax_rate):
        self.lines = lines
        self.tax_rate = tax_rate

    def subtotal(self):
        return sum(self.lines)

    @property
    def total(self):
        return round(self.subtotal() * (1 + self.tax_rate), 2)


invoice = Invoice([10.0, 15.5], 0.2)
print(invoice.total)
