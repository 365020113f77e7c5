# Tests: `from module import name as alias` next to a local function that has the original name.
from billing.tax import compute as compute_tax


def compute(amount):
    return amount + compute_tax(amount)


print(compute(100.0))
