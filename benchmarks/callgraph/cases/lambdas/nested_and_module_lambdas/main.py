# Tests: a lambda inside a lambda is named after it (<lambda1>.<lambda1>); module lambdas are counted in source order.
def invoice_age(invoice, today):
    return today - invoice["issued"]


def priority(invoice):
    return 0 if invoice["status"] == "disputed" else 1


by_age = lambda today: lambda invoice: invoice_age(invoice, today)  # noqa: E731
by_priority_then_id = lambda invoice: (priority(invoice), invoice["id"])  # noqa: E731

INVOICES = [
    {"id": "INV-3", "issued": 5, "status": "open"},
    {"id": "INV-1", "issued": 9, "status": "disputed"},
    {"id": "INV-2", "issued": 1, "status": "open"},
]

print([invoice["id"] for invoice in sorted(INVOICES, key=by_age(10))])
print([invoice["id"] for invoice in sorted(INVOICES, key=by_priority_then_id)])
