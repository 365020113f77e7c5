# Invoice numbering.
from itertools import count

_sequence = count(1)


def next_number():
    return f"INV-{next(_sequence):04d}"
