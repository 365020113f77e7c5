# Tests: functions passed through *args and **kwargs are called from inside the receiving function.
def validate_amount(payment):
    return payment["amount"] > 0


def validate_currency(payment):
    return payment["currency"] in {"EUR", "USD"}


def on_valid(payment):
    return f"accepted {payment['id']}"


def on_invalid(payment):
    return f"rejected {payment['id']}"


def run_checks(payment, *checks, **outcomes):
    if all(check(payment) for check in checks):
        return outcomes["valid"](payment)
    return outcomes["invalid"](payment)


CHECKS = (validate_amount, validate_currency)
print(run_checks({"id": "pay_1", "amount": 20, "currency": "EUR"}, *CHECKS, valid=on_valid, invalid=on_invalid))
print(run_checks({"id": "pay_2", "amount": 20, "currency": "JPY"}, *CHECKS, valid=on_valid, invalid=on_invalid))
