# Tests: an __iter__ written as a generator is called by yield from; generator functions are called where they are created.
class Statement:
    def __init__(self, customer, invoices):
        self.customer = customer
        self.invoices = invoices

    def __iter__(self):
        for invoice in self.invoices:
            yield format_line(invoice)


def format_line(invoice):
    return f"{invoice['id']:>8} {invoice['total']:>8.2f}"


def header(customer):
    yield f"Statement for {customer}"


def render(statement):
    yield from header(statement.customer)
    yield from statement


def print_statement(statement):
    for line in render(statement):
        print(line)


print_statement(Statement("acme", [{"id": "INV-1", "total": 10.0}, {"id": "INV-2", "total": 25.5}]))
