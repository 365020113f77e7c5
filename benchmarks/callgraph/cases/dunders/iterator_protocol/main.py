# Tests: for-loops, iter() and next() call __iter__ and __next__ of a class that implements the iterator protocol.
class InvoicePages:
    def __init__(self, pages):
        self.pages = pages
        self.position = 0

    def __iter__(self):
        self.position = 0
        return self

    def __next__(self):
        if self.position >= len(self.pages):
            raise StopIteration
        page = fetch_page(self.pages[self.position])
        self.position += 1
        return page


def fetch_page(number):
    return [f"INV-{number}{i}" for i in range(2)]


def first_page(pages):
    return next(iter(pages))


def all_invoices(pages):
    invoices = []
    for page in pages:
        invoices.extend(page)
    return invoices


pages = InvoicePages([1, 2, 3])
print(first_page(pages))
print(all_invoices(pages))
