# Payload parsing.
import json


def parse(body):
    return json.loads(body)


def require(payload, key):
    if key not in payload:
        raise KeyError(key)
