# Tests: a nested function named like a module function shadows it inside the enclosing function only.


def log(message):
    return f"[app] {message}"


def handle_webhook(event):
    def log(message):
        return f"[webhook {event['id']}] {message}"

    return log("received")


def handle_cron():
    return log("tick")


print(handle_webhook({"id": "evt_1"}))
print(handle_cron())
print(log("started"))
