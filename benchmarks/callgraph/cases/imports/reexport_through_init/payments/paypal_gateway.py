# A second gateway with the same function names; not re-exported.


def charge(amount):
    return f"paypal charge {amount}"


def refund(charge_id):
    return f"paypal refund {charge_id}"
