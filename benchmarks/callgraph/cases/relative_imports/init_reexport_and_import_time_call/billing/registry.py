# Handler registry.
HANDLERS = {}


def register(kind, handler):
    HANDLERS[kind] = handler


def run(kind, *args):
    return HANDLERS[kind](*args)
