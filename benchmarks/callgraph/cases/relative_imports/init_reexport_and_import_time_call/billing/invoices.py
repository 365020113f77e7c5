# Invoice issuing.
from .numbering import next_number


def issue_invoice(customer):
    return {"number": next_number(), "customer": customer}
