# Tests: a generator that yields functions which the consumer then calls.


def validate(order):
    return order["total"] > 0


def reserve_stock(order):
    return f"reserved {order['sku']}"


def capture_payment(order):
    return f"captured {order['total']}"


def steps():
    yield validate
    yield reserve_stock
    yield capture_payment


def fulfil(order):
    return [step(order) for step in steps()]


print(fulfil({"sku": "KB-1", "total": 49.0}))
