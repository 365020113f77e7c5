# Tests: two-argument super(Class, self) and super() inside a classmethod; cls(...) runs the inherited __init__.


class Record:
    def __init__(self, fields=None):
        self.fields = fields or {}

    @classmethod
    def create(cls, **fields):
        return cls(fields)

    def to_dict(self):
        return dict(self.fields)


class Customer(Record):
    @classmethod
    def create(cls, **fields):
        fields.setdefault("tier", "standard")
        return super().create(**fields)

    def to_dict(self):
        data = super(Customer, self).to_dict()
        data["kind"] = "customer"
        return data


print(Customer.create(name="Acme").to_dict())
