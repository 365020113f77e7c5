# Tests: a class decorator factory is called by the module; it returns the class itself, so X(...) still reaches X.__init__.
GATEWAYS = {}


def register_gateway(name):
    def add(cls):
        GATEWAYS[name] = cls
        return cls

    return add


@register_gateway("stripe")
class StripeGateway:
    def __init__(self, api_key):
        self.api_key = api_key

    def charge(self, amount):
        return f"stripe charged {amount}"


@register_gateway("adyen")
class AdyenGateway:
    def __init__(self, api_key):
        self.api_key = mask(api_key)

    def charge(self, amount):
        return f"adyen charged {amount}"


def mask(key):
    return key[:3] + "***"


def checkout(provider, amount):
    gateway = GATEWAYS[provider]("sk_test")
    return gateway.charge(amount)


print(checkout("stripe", 10))
print(checkout("adyen", 20))
