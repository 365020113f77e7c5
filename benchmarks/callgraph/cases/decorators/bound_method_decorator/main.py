# Tests: decorators that are bound methods of an instance (@app.route(...)), Flask style: the module calls route and what it returns.


class App:
    def __init__(self):
        self.routes = {}

    def route(self, path):
        def register(fn):
            self.routes[path] = fn
            return fn

        return register

    def dispatch(self, path):
        return self.routes[path]()


app = App()


def charge_card():
    return "charged"


@app.route("/health")
def health():
    return "ok"


@app.route("/pay")
def pay():
    return charge_card()


print(app.dispatch("/pay"))
print(app.dispatch("/health"))
