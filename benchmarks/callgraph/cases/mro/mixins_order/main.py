# Tests: lookup through several mixins: the leftmost class in the MRO that defines the name wins.


class BaseService:
    def describe(self):
        return "base service"

    def execute(self, request):
        return f"executed {request}"


class LoggingMixin:
    def describe(self):
        return "logging"

    def log(self, message):
        return f"[log] {message}"


class RetryMixin:
    def execute(self, request):
        return f"retried {request}"


class PaymentService(LoggingMixin, RetryMixin, BaseService):
    def handle(self, request):
        self.log(self.describe())
        return self.execute(request)


print(PaymentService().handle("charge in_1"))
