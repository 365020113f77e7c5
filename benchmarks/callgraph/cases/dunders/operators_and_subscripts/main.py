# Tests: operators, comparisons, `in`, subscripts, `del` and len()/str() run the dunder methods the case defines.
class Money:
    def __init__(self, cents):
        self.cents = cents

    def __add__(self, other):
        return Money(self.cents + other.cents)

    def __iadd__(self, other):
        self.cents += other.cents
        return self

    def __neg__(self):
        return Money(-self.cents)

    def __eq__(self, other):
        return self.cents == other.cents

    def __lt__(self, other):
        return self.cents < other.cents

    def __str__(self):
        return f"{self.cents / 100:.2f} EUR"


class Ledger:
    def __init__(self):
        self.entries = {}

    def __getitem__(self, account):
        return self.entries.get(account, Money(0))

    def __setitem__(self, account, amount):
        self.entries[account] = amount

    def __delitem__(self, account):
        del self.entries[account]

    def __contains__(self, account):
        return account in self.entries

    def __len__(self):
        return len(self.entries)


def post_refund(ledger: Ledger, account, amount: Money):
    balance = ledger[account] + -amount
    ledger[account] = balance
    return balance


def close_account(ledger: Ledger, account):
    if account not in ledger:
        return False
    del ledger[account]
    return True


def summary(ledger: Ledger, fee: Money):
    total = Money(0)
    total += fee
    if total < fee or total == fee:
        return f"{len(ledger)} accounts, fees {str(total)}"
    return ""


ledger = Ledger()
ledger["acme"] = Money(1500)
post_refund(ledger, "acme", Money(250))
close_account(ledger, "acme")
print(summary(ledger, Money(99)))
