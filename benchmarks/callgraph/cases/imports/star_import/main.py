# Tests: a star import restricted by __all__; the names resolve to the defining module.
from validators import *


def validate_customer(customer):
    return validate_email(customer["email"]) and validate_iban(customer["iban"])


print(validate_customer({"email": "Billing@Example.com", "iban": "DE89 3704"}))
