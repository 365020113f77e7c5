# Tests: a function bound to another name (local and module level) and called through it.


def compute_tax(amount):
    return round(amount * 0.19, 2)


def invoice_total(amount):
    tax_fn = compute_tax
    return amount + tax_fn(amount)


calculate = invoice_total
print(calculate(100.0))
