# Tests: a function given as a parameter default is called through the parameter, as is one a caller passes instead.
def default_formatter(amount):
    return f"${amount:,.2f}"


def euro_formatter(amount):
    return f"{amount:,.2f} EUR"


def receipt_line(label, amount, formatter=default_formatter):
    return f"{label}: {formatter(amount)}"


def receipt(lines, formatter=None):
    if formatter is None:
        return [receipt_line(label, amount) for label, amount in lines]
    return [receipt_line(label, amount, formatter) for label, amount in lines]


print(receipt([("Subtotal", 1200.0), ("VAT", 240.0)]))
print(receipt([("Total", 1440.0)], euro_formatter))
