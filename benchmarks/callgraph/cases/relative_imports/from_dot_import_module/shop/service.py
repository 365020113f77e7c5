# Order service using a sibling module through `from . import`.
from . import repository


def create_order(order_id, total):
    return repository.save({"id": order_id, "total": total})
