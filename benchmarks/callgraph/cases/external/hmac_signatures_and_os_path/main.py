# Tests: webhook signing with hmac and hashlib by import path, a method of the HMAC object, and os.path functions.
import hashlib
import hmac
import os.path

SECRET = b"whsec_test"


def sign(body):
    return hmac.new(SECRET, body, hashlib.sha256).hexdigest()


def verify(body, signature):
    return hmac.compare_digest(sign(body), signature)


def archive_name(folder, event_id):
    return os.path.join(folder, os.path.basename(f"{event_id}.json"))


body = b'{"type": "invoice.paid"}'
print(verify(body, sign(body)), verify(body, "forged"))
print(archive_name("webhooks", "evt_9"))
