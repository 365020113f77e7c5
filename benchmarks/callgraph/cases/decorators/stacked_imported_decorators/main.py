# Tests: stacked decorators from an imported module (via attribute and via from-import).
import hooks
from hooks import register


@hooks.audited
@register("refund.created")
def handle_refund(event):
    return issue_credit_note(event["amount"])


def issue_credit_note(amount):
    return {"credit_note": -amount}


print(handle_refund({"amount": 30}))
print(hooks.REGISTRY["refund.created"]({"amount": 5}))
