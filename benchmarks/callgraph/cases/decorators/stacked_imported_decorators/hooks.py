# Decorators used by main.py.
AUDITED = set()
REGISTRY = {}


def audited(fn):
    AUDITED.add(fn.__name__)
    return fn


def register(event_type):
    def attach(fn):
        REGISTRY[event_type] = fn
        return fn

    return attach
