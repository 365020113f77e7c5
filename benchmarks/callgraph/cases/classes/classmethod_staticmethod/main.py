# Tests: classmethod and staticmethod calls via the class, via cls and via self; cls(...) runs __init__.


class Money:
    def __init__(self, cents, currency):
        self.currency = self.check_currency(currency)
        self.cents = cents

    @staticmethod
    def check_currency(code):
        if code not in {"EUR", "USD"}:
            raise ValueError(code)
        return code

    @classmethod
    def from_decimal(cls, amount, currency):
        return cls(int(round(amount * 100)), currency)

    @classmethod
    def parse(cls, text):
        amount, currency = text.split()
        return cls.from_decimal(float(amount), Money.check_currency(currency))


price = Money.parse("19.99 EUR")
print(price.cents, price.currency)
