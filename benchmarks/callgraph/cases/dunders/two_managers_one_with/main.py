# Tests: one with statement over two context managers calls both __enter__ and both __exit__; an __exit__ suppresses an error.
class Lock:
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        return acquire(self.name)

    def __exit__(self, exc_type, exc, tb):
        release(self.name)
        return False


class SuppressDeclines:
    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        return exc_type is PaymentDeclined


class PaymentDeclined(Exception):
    pass


HELD = []


def acquire(name):
    HELD.append(name)
    return name


def release(name):
    HELD.remove(name)


def capture(invoice_id, amount):
    with Lock(f"invoice:{invoice_id}"), SuppressDeclines():
        if amount > 100:
            raise PaymentDeclined(invoice_id)
        return "captured"
    return "declined"


print(capture("INV-80", 50), capture("INV-81", 500), HELD)
