# Tests: a class body is a caller (attribute initialisers, a lambda, a nested class's body); the class's decorator and base run around it.
def load_rate(currency):
    return {"EUR": 20, "USD": 10, "CHF": 8}[currency]


def register(cls):
    REGISTRY.append(cls)
    return cls


def base_for(kind):
    return {"vat": VatInvoice}[kind]


REGISTRY = []


class VatInvoice:
    RATE = 0

    def __init__(self, cents):
        self.cents = cents

    def total(self):
        return self.cents + self.cents * self.RATE // 100


@register
class EuroInvoice(base_for("vat")):
    RATE = load_rate("EUR")
    CURRENCIES = sorted(["EUR", "CHF"])
    round_to_euro = lambda cents: round(cents, -2)  # noqa: E731

    def total(self):
        return EuroInvoice.round_to_euro(super().total())


def make_invoice_type(currency):
    class LocalInvoice(VatInvoice):
        RATE = load_rate(currency)

    return LocalInvoice


swiss = make_invoice_type("CHF")(1250)
print(EuroInvoice(1000).total(), swiss.total(), EuroInvoice.CURRENCIES, len(REGISTRY))
