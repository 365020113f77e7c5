# Tests: module-level lambdas in a dict are nodes (<lambda1>, <lambda2>); the function that fetches and calls one calls that node.


def add_vat(amount):
    return amount * 1.2


def subtract_fee(amount):
    return amount - 0.3


ADJUSTMENTS = {
    "vat": lambda amount: add_vat(amount),
    "fee": lambda amount: subtract_fee(amount),
}


def adjust(amount, kind):
    return ADJUSTMENTS[kind](amount)


print(adjust(10.0, "vat"), adjust(10.0, "fee"))
