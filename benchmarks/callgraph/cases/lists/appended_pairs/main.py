# Tests: (name, function) pairs in a list, including one appended later by another function.


def apply_vat(total):
    return total * 1.2


def apply_discount(total):
    return total * 0.95


def apply_fee(total):
    return total + 1.5


RULES = [("vat", apply_vat), ("discount", apply_discount)]


def enable_fee():
    RULES.append(("fee", apply_fee))


def price(total):
    for _name, rule in RULES:
        total = rule(total)
    return round(total, 2)


enable_fee()
print(price(100.0))
