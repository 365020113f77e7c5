# Tests: functions calling functions that are defined further down the file; entry under __main__ guard.


def build_receipt(order):
    return header(order) + "\n" + body(order)


def header(order):
    return f"Order {order['id']}"


def body(order):
    return "\n".join(line(item) for item in order["items"])


def line(item):
    return f"- {item}"


if __name__ == "__main__":
    print(build_receipt({"id": 17, "items": ["keyboard", "mouse"]}))
