# Net prices.
PRICES = {"KB-1": 49.0, "MS-2": 19.0}


def price_for(sku):
    return PRICES[sku]
