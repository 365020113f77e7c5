# Tests: `from ..pkg import module` and `from ..pkg.module import name` (parent-relative imports).
from shop.api.views import product_view


def render_page(skus):
    return [product_view(sku, "DE") for sku in skus]


print(render_page(["KB-1", "MS-2"]))
