# Tests: functions handed to builtins (sorted and max keys, map, filter) are called from the function that hands them over.
INVOICES = [
    {"id": "INV-3", "total": 120.0, "status": "open"},
    {"id": "INV-1", "total": 75.5, "status": "paid"},
    {"id": "INV-2", "total": 310.0, "status": "open"},
]


def by_total(invoice):
    return invoice["total"]


def is_open(invoice):
    return invoice["status"] == "open"


def label(invoice):
    return f"{invoice['id']}: {invoice['total']:.2f}"


def largest(invoices):
    return max(invoices, key=by_total)


def open_labels(invoices):
    return list(map(label, filter(is_open, sorted(invoices, key=by_total))))


print(open_labels(INVOICES))
print(largest(INVOICES)["id"])
print(len(INVOICES))
