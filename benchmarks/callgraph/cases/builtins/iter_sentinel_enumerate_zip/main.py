# Tests: iter(callable, sentinel) calls the callable from the function that drives it; enumerate, zip, dict and isinstance are builtins.
class WebhookQueue:
    def __init__(self, events):
        self.events = list(events)

    def pop(self):
        return self.events.pop(0) if self.events else None


def normalise(event):
    return event.strip().lower() if isinstance(event, str) else str(event)


def drain(queue):
    handled = []
    for position, event in enumerate(iter(queue.pop, None), start=1):
        handled.append((position, normalise(event)))
    return dict(handled)


def pair_with_ids(names, ids):
    return dict(zip(ids, names))


queue = WebhookQueue(["Invoice.Paid ", "CUSTOMER.CREATED", 404])
print(drain(queue))
print(pair_with_ids(["paid", "voided"], [1, 2]))
