# Tests: lambdas kept in a dict inside a function are nodes; the function calls them, and each lambda calls its own targets.
def cents(amount):
    return int(round(amount * 100))


def percent(amount, rate):
    return amount * rate / 100


def fee(method, amount):
    rules = {
        "card": lambda value: cents(percent(value, 2.9)) + 30,
        "sepa": lambda value: cents(0.35),
        "wire": lambda value: 0,
    }
    return rules[method](amount)


print([fee(method, 120.0) for method in ("card", "sepa", "wire")])
