# Stripe-like gateway.


def _request(method, path):
    return f"{method} https://api.stripe.example{path}"


def charge(amount):
    return _request("POST", f"/charges?amount={amount}")


def refund(charge_id):
    return _request("POST", f"/refunds?charge={charge_id}")
