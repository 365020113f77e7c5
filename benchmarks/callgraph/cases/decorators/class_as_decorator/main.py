# Tests: a class used as a decorator: applying it calls its __init__, and calls of the decorated name reach its __call__.
class memoized:
    def __init__(self, fn):
        self.fn = fn
        self.cache = {}

    def __call__(self, *args):
        if args not in self.cache:
            self.cache[args] = self.fn(*args)
        return self.cache[args]


@memoized
def exchange_rate(source, target):
    return fetch_rate(source) / fetch_rate(target)


def fetch_rate(currency):
    return {"EUR": 1.0, "USD": 0.92, "GBP": 1.17}[currency]


def convert(amount, source, target):
    return round(amount * exchange_rate(source, target), 2)


print(convert(100, "USD", "EUR"))
print(convert(250, "USD", "EUR"))
print(convert(80, "GBP", "USD"))
