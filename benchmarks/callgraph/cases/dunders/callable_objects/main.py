# Tests: calling an instance runs its __call__, also when the instance is kept in a dict or handed to map().
class FeeRule:
    def __init__(self, rate, minimum):
        self.rate = rate
        self.minimum = minimum

    def __call__(self, amount):
        return max(self.minimum, round_cents(amount * self.rate))


class FlatFee:
    def __init__(self, fee):
        self.fee = fee

    def __call__(self, amount):
        return self.fee


def round_cents(value):
    return round(value, 2)


FEES = {"card": FeeRule(0.029, 0.30), "transfer": FlatFee(1.5)}


def fee_for(method, amount):
    return FEES[method](amount)


def card_fees(amounts):
    return list(map(FEES["card"], amounts))


print(fee_for("card", 200.0), fee_for("transfer", 200.0))
print(card_fees([10.0, 50.0]))
