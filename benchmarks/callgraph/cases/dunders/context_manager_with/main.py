# Tests: a with statement calls __enter__ and __exit__ of the context manager; the with line also calls its __init__.
class LedgerTransaction:
    def __init__(self, ledger):
        self.ledger = ledger
        self.pending = []

    def __enter__(self):
        self.pending = []
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            commit(self.ledger, self.pending)
        return False

    def post(self, account, amount):
        self.pending.append((account, amount))


def commit(ledger, entries):
    for account, amount in entries:
        ledger[account] = ledger.get(account, 0) + amount


def record_payment(ledger, invoice_id, amount):
    with LedgerTransaction(ledger) as tx:
        tx.post("cash", amount)
        tx.post(f"receivable:{invoice_id}", -amount)
    return ledger


print(record_payment({}, "INV-50", 80))
