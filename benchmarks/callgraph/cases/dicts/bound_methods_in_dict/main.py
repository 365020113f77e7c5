# Tests: bound methods stored in a dict built in __init__; an unrelated class has same-named methods.


class WebhookProcessor:
    def __init__(self):
        self.handlers = {"charge.succeeded": self._succeeded, "charge.refunded": self._refunded}

    def _succeeded(self, event):
        return f"fulfil {event['id']}"

    def _refunded(self, event):
        return f"restock {event['id']}"

    def process(self, event):
        return self.handlers[event["type"]](event)


class LegacyProcessor:
    def _succeeded(self, event):
        return "legacy"

    def _refunded(self, event):
        return "legacy"


processor = WebhookProcessor()
print(processor.process({"type": "charge.succeeded", "id": "ch_1"}))
print(processor.process({"type": "charge.refunded", "id": "ch_2"}))
