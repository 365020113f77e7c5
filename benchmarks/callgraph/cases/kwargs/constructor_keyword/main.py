# Tests: a function passed by keyword to a constructor, stored on self, and called from another method.
import hashlib
import hmac


def hmac_sign(secret, body):
    return hmac.new(secret, body, hashlib.sha256).hexdigest()


def no_sign(secret, body):
    return ""


class Webhook:
    def __init__(self, url, secret=b"", signer=no_sign):
        self.url = url
        self.secret = secret
        self.signer = signer

    def send(self, body):
        signature = self.signer(self.secret, body)
        return {"url": self.url, "signature": signature}


hook = Webhook(url="https://example.com/hooks", secret=b"s3cret", signer=hmac_sign)
print(hook.send(b'{"event": "invoice.paid"}'))
