# Tests: an attribute assigned a new instance in __init__ (self.gateway = StripeGateway()) types later calls.


class StripeGateway:
    def charge(self, amount):
        return f"stripe charged {amount}"


class PaypalGateway:
    def charge(self, amount):
        return f"paypal charged {amount}"


class Checkout:
    def __init__(self):
        self.gateway = StripeGateway()

    def pay(self, amount):
        return self.gateway.charge(amount)


print(Checkout().pay(59.0))
