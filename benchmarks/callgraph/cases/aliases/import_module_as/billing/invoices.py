# Invoice creation.


def next_number():
    return "INV-0001"


def create(customer, amount):
    return {"customer": customer, "amount": amount, "number": next_number()}
