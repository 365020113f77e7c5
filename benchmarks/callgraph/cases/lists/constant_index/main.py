# Tests: list elements selected by constant indexes (0 and -1); only those elements are invoked.


def parse(raw):
    return raw.split("|")


def enrich(record):
    return record + ["enriched"]


def store(record):
    return len(record)


STEPS = [parse, enrich, store]


def first_step(raw):
    return STEPS[0](raw)


def last_step(record):
    return STEPS[-1](record)


print(last_step(first_step("in_1|42.0")))
