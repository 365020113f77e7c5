# Webhook handler using relative imports with an alias.
from .parsing import parse as parse_payload
from .parsing import require


def handle_webhook(body):
    payload = parse_payload(body)
    require(payload, "type")
    return payload["type"]
