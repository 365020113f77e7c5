# Tests: functions passed positionally and by keyword are called through the parameter by the receiving function.
def send_email(address, text):
    return f"email to {address}: {text}"


def send_sms(number, text):
    return f"sms to {number}: {text}"


def log_failure(reason):
    return f"failed: {reason}"


def notify(contact, text, channel, on_error=None):
    if not contact:
        return on_error("no contact")
    return channel(contact, text)


print(notify("ap@acme.test", "Invoice INV-60 paid", send_email))
print(notify("+15550100", "Payment received", channel=send_sms))
print(notify("", "Payment failed", send_sms, on_error=log_failure))
