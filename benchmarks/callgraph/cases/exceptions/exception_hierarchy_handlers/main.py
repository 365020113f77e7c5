# Tests: raising a subclass reaches the __init__ it inherits from its base; each except clause calls its own handler.
class WebhookError(Exception):
    def __init__(self, event_id, detail):
        super().__init__(detail)
        self.event_id = event_id


class SignatureMismatch(WebhookError):
    pass


class UnknownEventType(WebhookError):
    pass


SECRET = "whsec_test"


def verify(event):
    if event["signature"] != SECRET:
        raise SignatureMismatch(event["id"], "bad signature")


def route(event):
    if event["type"] not in ("invoice.paid", "invoice.voided"):
        raise UnknownEventType(event["id"], event["type"])
    return f"handled {event['type']}"


def reject(error):
    return {"status": 401, "event": error.event_id}


def ignore(error):
    return {"status": 202, "event": error.event_id}


def receive(event):
    try:
        verify(event)
        return {"status": 200, "body": route(event)}
    except SignatureMismatch as error:
        return reject(error)
    except UnknownEventType as error:
        return ignore(error)


print(receive({"id": "evt_1", "signature": SECRET, "type": "invoice.paid"}))
print(receive({"id": "evt_2", "signature": "forged", "type": "invoice.paid"}))
print(receive({"id": "evt_3", "signature": SECRET, "type": "customer.created"}))
