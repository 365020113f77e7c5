# Tests: `@app.route(...)` on methods runs in the class body (edges from the class, with @staticmethod); the routed handlers run through the app's table.
class App:
    def __init__(self):
        self.routes = {}

    def route(self, path):
        def register(handler):
            self.routes[path] = handler
            return handler

        return register

    def dispatch(self, path, view, payload):
        return self.routes[path](view, payload)


def audited(fn):
    def audit_wrapper(view, payload):
        print("webhook", payload["id"])
        return fn(view, payload)

    return audit_wrapper


app = App()


class WebhookViews:
    @app.route("/webhooks/stripe")
    def stripe(self, payload):
        return self.verify(payload)

    @app.route("/webhooks/paypal")
    @audited
    def paypal(self, payload):
        return self.verify(payload)

    @staticmethod
    def verify(payload):
        return payload["signature"] == "ok"


views = WebhookViews()
print(app.dispatch("/webhooks/stripe", views, {"id": "evt_1", "signature": "ok"}))
print(app.dispatch("/webhooks/paypal", views, {"id": "evt_2", "signature": "bad"}))
