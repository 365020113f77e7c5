# Tests: a class defined inside a function; its methods are qualified under that function.


def format_line(prefix, message):
    return f"{prefix}: {message}"


def make_handler(prefix):
    class Handler:
        def __init__(self):
            self.prefix = prefix

        def handle(self, message):
            return format_line(self.prefix, message)

    return Handler()


handler = make_handler("webhook")
print(handler.handle("invoice.paid received"))
