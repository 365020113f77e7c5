# Invoice helpers, imported as a module by main.py.
import itertools

_counter = itertools.count(1000)


def _next_number():
    return f"INV-{next(_counter)}"


def create_invoice(customer, amount):
    return {"number": _next_number(), "customer": customer, "amount": amount}
