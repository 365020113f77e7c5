# Tax computation.


def compute(amount, rate=0.19):
    return round(amount * rate, 2)
