# E-mail channel.


def _subject(body):
    return body.split(".")[0][:40]


def send(address, body):
    return f"mail to {address}: {_subject(body)}"
