# Tests: an immediately invoked lambda at module level and a lambda passed as a callback, each a node with its own calls.


def bootstrap():
    return {"db": "connected"}


def fetch(url):
    return f"GET {url}"


def retry(operation, attempts=3):
    for _ in range(attempts):
        result = operation()
        if result:
            return result
    return None


def load_rates(url):
    return retry(lambda: fetch(url))


state = (lambda: bootstrap())()
print(state, load_rates("https://rates.example/eur"))
