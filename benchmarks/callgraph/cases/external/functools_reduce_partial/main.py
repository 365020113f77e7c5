# Tests: functools.reduce and functools.partial by import path, and the in-case functions they call back.
import functools
from operator import itemgetter


def add_line(total, line):
    return total + line["qty"] * line["price"]


def apply_tax(rate, amount):
    return round(amount * (1 + rate), 2)


def invoice_total(lines, rate):
    subtotal = functools.reduce(add_line, lines, 0.0)
    with_vat = functools.partial(apply_tax, rate)
    return with_vat(subtotal)


def cheapest(lines):
    return min(lines, key=itemgetter("price"))


LINES = [{"sku": "A", "qty": 2, "price": 9.5}, {"sku": "B", "qty": 1, "price": 30.0}]
print(invoice_total(LINES, 0.2))
print(cheapest(LINES)["sku"])
