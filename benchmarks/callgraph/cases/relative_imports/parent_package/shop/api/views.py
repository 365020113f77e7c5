# Views importing from the parent package with `..`.
from ..core import tax
from ..core.pricing import price_for


def product_view(sku, country):
    net = price_for(sku)
    return {"sku": sku, "gross": round(net * (1 + tax.rate_for(country)), 2)}
