# Tests: reading a class attribute bound to a descriptor runs its __get__; an instance attribute does not.
class Setting:
    def __init__(self, key, default):
        self.key = key
        self.default = default

    def __get__(self, shop, owner=None):
        if shop is None:
            return self
        return shop.settings.get(self.key, self.default)


class Shop:
    currency = Setting("CURRENCY", "EUR")
    tax_rate = Setting("TAX_RATE", 0.2)

    def __init__(self, settings):
        self.settings = settings
        self.name = settings.get("NAME", "shop")

    def gross(self, net_cents):
        return round(net_cents * (1 + self.tax_rate))


def price_tag(shop: Shop, net_cents):
    return f"{shop.gross(net_cents)} {shop.currency} at {shop.name}"


shop = Shop({"CURRENCY": "USD"})
print(price_tag(shop, 1000))
