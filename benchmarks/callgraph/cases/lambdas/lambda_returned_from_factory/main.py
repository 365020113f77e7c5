# Tests: a lambda returned by a factory is a node of the factory's scope; whoever calls the returned lambda calls that node.


def check_limit(amount, limit):
    return amount <= limit


def make_validator(limit):
    return lambda amount: check_limit(amount, limit)


def approve(amount):
    validator = make_validator(500)
    return validator(amount)


print(approve(120), approve(900))
