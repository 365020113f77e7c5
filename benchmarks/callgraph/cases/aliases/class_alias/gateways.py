# Two payment gateways with the same interface.


class StripeGateway:
    def __init__(self, api_key):
        self.api_key = api_key

    def charge(self, amount):
        return f"stripe: {amount}"


class PaypalGateway:
    def __init__(self, client_id):
        self.client_id = client_id

    def charge(self, amount):
        return f"paypal: {amount}"
