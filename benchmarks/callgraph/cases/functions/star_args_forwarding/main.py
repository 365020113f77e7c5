# Tests: a generic helper forwarding *args/**kwargs to whichever function it receives.


def call_with_retry(fn, *args, attempts=3, **kwargs):
    for attempt in range(attempts):
        try:
            return fn(*args, **kwargs)
        except ConnectionError:
            if attempt == attempts - 1:
                raise


def fetch_rates(base):
    return {"base": base, "EUR": 1.0}


def post_invoice(invoice_id, *, draft=False):
    return f"posted {invoice_id} draft={draft}"


def cancel_invoice(invoice_id):
    return f"cancelled {invoice_id}"


print(call_with_retry(fetch_rates, "USD"))
print(call_with_retry(post_invoice, "in_5", attempts=2, draft=True))
