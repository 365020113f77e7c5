# Tests: a closure that calls a function captured from its enclosing function's parameter.


def json_encoder(payload):
    return str(payload).replace("'", '"')


def make_sender(encode):
    def send(payload):
        return f"POST /webhooks body={encode(payload)}"

    return send


sender = make_sender(json_encoder)
print(sender({"event": "invoice.paid"}))
