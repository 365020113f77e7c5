# Tests: `from package.module import name`.
from utils.money import to_cents


def charge_request(amount):
    return {"amount": to_cents(amount), "currency": "eur"}


print(charge_request(12.34))
