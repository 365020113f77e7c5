# Tests: dict.get() with a function default, and a dict built with dict() and update().


def get_invoice(request):
    return {"status": 200, "id": request["id"]}


def create_invoice(request):
    return {"status": 201}


def method_not_allowed(request):
    return {"status": 405}


ROUTES = dict(GET=get_invoice)
ROUTES.update({"POST": create_invoice})


def handle(request):
    handler = ROUTES.get(request["method"], method_not_allowed)
    return handler(request)


for method in ("GET", "POST", "DELETE"):
    print(handle({"method": method, "id": "in_9"}))
