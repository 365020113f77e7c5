# Tests: methods found one and two levels up the inheritance chain.


class Model:
    def validate(self):
        return all(value is not None for value in vars(self).values())


class TimestampedModel(Model):
    def touch(self):
        self.updated_at = "2024-01-01T00:00:00Z"


class Invoice(TimestampedModel):
    def __init__(self, number):
        self.number = number


invoice = Invoice("INV-1")
invoice.touch()
print(invoice.validate())
