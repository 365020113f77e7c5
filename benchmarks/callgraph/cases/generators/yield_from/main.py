# Tests: yield from delegation to other generator functions.


def open_invoices():
    yield "in_1"
    yield "in_2"


def overdue_invoices():
    yield from (f"{number}-overdue" for number in open_invoices())


def all_invoices():
    yield from open_invoices()
    yield from overdue_invoices()


print(list(all_invoices()))
