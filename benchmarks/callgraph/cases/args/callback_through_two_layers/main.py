# Tests: a callback handed down through two functions is called by the innermost one; a bound method is passed as well.
class Ledger:
    def __init__(self):
        self.entries = []

    def record(self, entry):
        self.entries.append(entry)
        return len(self.entries)


def to_entry(invoice):
    return (invoice["id"], invoice["total"])


def each_invoice(invoices, transform, sink):
    return [sink(transform(invoice)) for invoice in invoices]


def export(invoices, sink):
    return each_invoice(invoices, to_entry, sink)


ledger = Ledger()
print(export([{"id": "INV-1", "total": 5.0}, {"id": "INV-2", "total": 7.5}], ledger.record))
print(ledger.entries)
