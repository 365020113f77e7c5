# Tests: an exception built by a classmethod factory (cls(...) reaches __init__), raise ... from, and a retry loop in a handler.
class GatewayTimeout(Exception):
    def __init__(self, provider, attempts):
        super().__init__(f"{provider} timed out after {attempts} attempts")
        self.provider = provider
        self.attempts = attempts

    @classmethod
    def after(cls, provider, attempts):
        return cls(provider, attempts)


class FlakyGateway:
    def __init__(self, failures):
        self.failures = failures

    def capture(self, payment_id):
        if self.failures:
            self.failures -= 1
            raise TimeoutError(payment_id)
        return {"payment": payment_id, "status": "captured"}


def capture_with_retry(gateway, payment_id, attempts=3):
    for attempt in range(1, attempts + 1):
        try:
            return gateway.capture(payment_id)
        except TimeoutError as exc:
            if attempt == attempts:
                raise GatewayTimeout.after("acme-pay", attempts) from exc
    return None


def report(payment_id, failures):
    try:
        return capture_with_retry(FlakyGateway(failures), payment_id)
    except GatewayTimeout as error:
        return {"payment": payment_id, "error": str(error)}


print(report("pay_1", 1))
print(report("pay_2", 5))
