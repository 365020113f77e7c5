# Tests: an attribute chain (app.services.billing.charge) typed through several constructors.


class BillingService:
    def __init__(self, currency):
        self.currency = currency

    def charge(self, amount):
        return f"charged {amount} {self.currency}"


class ShippingService:
    def charge(self, amount):
        return f"shipping fee {amount}"


class Services:
    def __init__(self):
        self.billing = BillingService("EUR")
        self.shipping = ShippingService()


class App:
    def __init__(self):
        self.services = Services()


app = App()
print(app.services.billing.charge(12.5))
