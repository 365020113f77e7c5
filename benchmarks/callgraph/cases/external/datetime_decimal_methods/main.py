# Tests: methods called on instances of standard-library classes (date, Decimal) are named by their class's import path.
import datetime
from decimal import ROUND_HALF_UP, Decimal


def due_date(issued, days):
    return issued + datetime.timedelta(days=days)


def to_money(value):
    return Decimal(value).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def describe(invoice_id, issued, amount):
    due = due_date(issued, 30)
    return f"{invoice_id} due {due.isoformat()} amount {to_money(amount)}"


print(describe("INV-30", datetime.date(2026, 3, 1), "149.995"))
print(datetime.date.fromisoformat("2026-04-01").weekday())
