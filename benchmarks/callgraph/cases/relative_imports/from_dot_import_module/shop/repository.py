# In-memory order storage.
_ORDERS = {}


def save(order):
    _ORDERS[order["id"]] = order
    return order["id"]
