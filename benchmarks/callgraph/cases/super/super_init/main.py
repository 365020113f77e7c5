# Tests: super().__init__() from a subclass constructor.


class Account:
    def __init__(self, owner):
        self.owner = owner
        self.balance = 0


class BusinessAccount(Account):
    def __init__(self, owner, vat_id):
        super().__init__(owner)
        self.vat_id = vat_id


account = BusinessAccount("Acme GmbH", "DE123456789")
print(account.owner, account.vat_id)
