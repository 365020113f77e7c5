# Tests: a module-level name rebound inside another function via `global`; both bindings get called.


def plain_formatter(amount):
    return str(amount)


def money_formatter(amount):
    return f"${amount:,.2f}"


formatter = plain_formatter


def use_money_format():
    global formatter
    formatter = money_formatter


def render(amount):
    return formatter(amount)


print(render(1250))
use_money_format()
print(render(1250))
