# Tests: super() resolves to the nearest ancestor defining the method, skipping a parent that does not.


class Handler:
    def handle(self, request):
        return f"handled {request}"


class AuthHandler(Handler):
    def authenticate(self, request):
        return request.startswith("token:")


class InvoiceHandler(AuthHandler):
    def handle(self, request):
        if not self.authenticate(request):
            return "401"
        return super().handle(request)


print(InvoiceHandler().handle("token:abc GET /invoices"))
