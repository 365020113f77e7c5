# Tests: `from ..pkg import module` and `from ..pkg.module import name` (parent-relative imports).
from shop.api.views import product_view

print(product_view("KB-1", "DE"))
