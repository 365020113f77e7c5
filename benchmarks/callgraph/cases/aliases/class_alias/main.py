# Tests: a class imported under an alias, then aliased again by assignment.
from gateways import StripeGateway as Gateway

DefaultGateway = Gateway


def checkout(amount):
    gateway = DefaultGateway("sk_test")
    return gateway.charge(amount)


print(checkout(42))
