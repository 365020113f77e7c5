# Tests: `from . import module` inside a package.
from shop.service import create_order


def place(order_id):
    return create_order(order_id, 30.0)


print(place("o_1"))
