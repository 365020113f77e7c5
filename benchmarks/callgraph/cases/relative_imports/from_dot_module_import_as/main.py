# Tests: `from .module import name as alias` in a package; main has its own parse().
from api.handlers import handle_webhook


def parse(text):
    return text.split()


print(handle_webhook('{"type": "invoice.paid"}'), parse("a b"))
