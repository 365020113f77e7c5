# Tests: a callback passed as a keyword argument and called by the receiver.


def send_receipt(amount):
    return f"receipt for {amount}"


def send_dunning_letter(amount):
    return f"dunning for {amount}"


def charge(amount, on_success):
    return on_success(amount)


print(charge(25.0, on_success=send_receipt))
