# Tests: functions stored in a list and called in a loop; a function not in the list is not linked.


def check_amount(payment):
    return payment["amount"] > 0


def check_currency(payment):
    return payment["currency"] in {"EUR", "USD"}


def check_country(payment):
    return payment.get("country") != "XX"


VALIDATORS = [check_amount, check_currency]


def is_valid(payment):
    for validator in VALIDATORS:
        if not validator(payment):
            return False
    return True


print(is_valid({"amount": 10, "currency": "EUR"}))
