# Tests: a sort-key lambda is called from the function that hands it to sorted(); the lambda's call is its own edge.
from datetime import date


def due_date(invoice):
    return date.fromisoformat(invoice["due"])


def sort_by_due(invoices):
    return sorted(invoices, key=lambda invoice: due_date(invoice))


print(sort_by_due([{"id": 1, "due": "2024-05-01"}, {"id": 2, "due": "2024-03-15"}]))
