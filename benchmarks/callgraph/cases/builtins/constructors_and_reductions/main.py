# Tests: builtin types called as constructors (int, float, tuple, set) are <builtin> edges like builtin functions (sum, abs, any).
def parse_cents(text):
    return int(float(text) * 100)


def is_refund(amount):
    return amount < 0


def summarise(entries):
    amounts = tuple(parse_cents(entry) for entry in entries)
    return {
        "net": sum(amounts),
        "gross": sum(abs(amount) for amount in amounts),
        "has_refund": any(is_refund(amount) for amount in amounts),
        "currencies": sorted(set(["EUR"])),
    }


print(summarise(["12.50", "-3.25", "40"]))
