# Tests: a wrapping decorator using functools.wraps: the module calls the decorator, callers reach the wrapper, the wrapper the function.
import functools
import time


def timed(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        result = fn(*args, **kwargs)
        wrapper.last_duration = time.perf_counter() - start
        return result

    return wrapper


def card_fee(amount):
    return round(amount * 0.029 + 0.30, 2)


@timed
def charge(amount):
    return amount + card_fee(amount)


print(charge(100.0))
