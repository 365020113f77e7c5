# Tests: `from . import module` inside a package.
from shop.service import create_order

print(create_order("o_1", 30.0))
