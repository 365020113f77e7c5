# Tests: functools.partial objects; calling the partial invokes the wrapped function.
from functools import partial


def send_webhook(url, payload, retries=3):
    return f"POST {url} ({retries} retries): {payload}"


def notify_accounting(payload):
    post = partial(send_webhook, "https://accounting.example/hooks", retries=5)
    return post(payload)


notify_partner = partial(send_webhook, "https://partner.example/hooks")
print(notify_partner({"event": "invoice.created"}))
print(notify_accounting({"event": "invoice.paid"}))
