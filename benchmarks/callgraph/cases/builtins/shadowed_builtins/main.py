# Tests: a module function, a parameter and a local variable that shadow builtin names are not <builtin> calls.
def sum(amounts):
    total = 0
    for amount in amounts:
        total += amount
    return round(total, 2)


def apply_discounts(amounts, filter):
    return [filter(amount) for amount in amounts]


def ten_percent_off(amount):
    return amount * 0.9


def invoice_total(amounts):
    print = []  # a local list that hides the builtin
    print.append("computing")
    return sum(apply_discounts(amounts, ten_percent_off)), print


def report(amounts):
    total, log = invoice_total(amounts)
    print(f"total {total} after {len(log)} step(s)")


report([100.0, 40.0, 12.5])
