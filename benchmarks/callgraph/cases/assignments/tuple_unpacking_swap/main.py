# Tests: functions bound by tuple unpacking, including a swap; only the final bindings are called.


def validate(payload):
    if "id" not in payload:
        raise ValueError("missing id")
    return payload


def normalize(payload):
    return {key.lower(): value for key, value in payload.items()}


def audit(payload):
    return {"audited": True, **payload}


def ingest(payload):
    first, second = validate, normalize
    first, second = second, first
    return first(payload)


def record(payload):
    _, writer = validate, audit
    return writer(payload)


print(ingest({"ID": 1}))
print(record({"id": 2}))
