# Tests: a nested function returned as a closure and called later by another function.


def round_money(value):
    return round(value, 2)


def make_discount(rate):
    def apply(amount):
        return round_money(amount * (1 - rate))

    return apply


def checkout(amount):
    ten_percent = make_discount(0.10)
    return ten_percent(amount)


print(checkout(80.0))
