# Tests: two stacked wrapping decorators: a caller reaches the outer wrapper, which calls the inner one, which calls the function.
AUDIT_LOG = []


def audited(fn):
    def audit_wrapper(*args):
        AUDIT_LOG.append(fn.__name__)
        return fn(*args)

    return audit_wrapper


def retried(fn):
    def retry_wrapper(*args):
        for _ in range(2):
            try:
                return fn(*args)
            except ConnectionError:
                continue
        return None

    return retry_wrapper


@audited
@retried
def refund(payment_id, amount):
    return {"payment": payment_id, "refunded": amount}


def process_refunds(requests):
    return [refund(payment_id, amount) for payment_id, amount in requests]


print(process_refunds([("pay_1", 5), ("pay_2", 9)]))
print(AUDIT_LOG)
