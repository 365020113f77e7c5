# Tests: a factory returning instances of different classes by argument; both branches run.


class StripeGateway:
    def charge(self, amount):
        return f"stripe charged {amount}"


class AdyenGateway:
    def __init__(self, merchant="default"):
        self.merchant = merchant

    def charge(self, amount):
        return f"adyen charged {amount} for {self.merchant}"


class MockGateway:
    def charge(self, amount):
        return "mock"


def gateway_for(country):
    if country == "US":
        return StripeGateway()
    return AdyenGateway()


def settle(country, amount):
    return gateway_for(country).charge(amount)


print(settle("US", 10))
print(settle("DE", 20))
