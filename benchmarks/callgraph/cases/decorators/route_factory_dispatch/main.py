# Tests: a decorator factory (@route(path)), called with what it returns by the module, and a later dispatch through the table it filled.

ROUTES = {}


def route(path):
    def decorator(fn):
        ROUTES[path] = fn
        return fn

    return decorator


@route("/invoices")
def list_invoices():
    return ["in_1", "in_2"]


@route("/health")
def health():
    return "ok"


def dispatch(path):
    return ROUTES[path]()


print(dispatch("/invoices"))
print(dispatch("/health"))
