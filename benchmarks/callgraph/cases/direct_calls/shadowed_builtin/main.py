# Tests: module functions named like builtins (sum, format) shadow the builtins.


def sum(lines):
    total = 0
    for line in lines:
        total += line["qty"] * line["price"]
    return total


def format(amount):
    return f"EUR {amount:.2f}"


def invoice_total(lines):
    return format(sum(lines))


print(invoice_total([{"qty": 2, "price": 3.5}, {"qty": 1, "price": 10.0}]))
print(len([1, 2]), max(1, 2))
