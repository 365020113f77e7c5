"""Exact facts the tree-sitter pass must get right on examples/shop."""

from __future__ import annotations

from cg.ingest.chunk import chunk_symbols
from cg.model import ImportRecord

from .helpers import extract_file, extract_source


def by_qualname(ex):
    return {s.qualname: s for s in ex.symbols}


def test_decorated_handler_starts_at_its_decorator():
    ex = extract_file("shop/webhooks/stripe_webhooks.py")
    handler = by_qualname(ex)["shop.webhooks.stripe_webhooks.stripe_webhook"]
    assert handler.start_line == 88
    assert handler.text.splitlines()[0].startswith('@router.route("/webhooks/stripe"')
    assert handler.signature == "def stripe_webhook(request: Request) -> Response"
    assert handler.end_line == 111
    assert handler.kind == "function"


def test_method_qualname_scope_and_header():
    ex = extract_file("shop/webhooks/stripe_webhooks.py")
    chunks = {s.qualname: s for s in chunk_symbols(ex)}
    method = chunks["shop.webhooks.stripe_webhooks.WebhookHandler.handle_invoice_payment_failed"]
    assert method.id == "shop/webhooks/stripe_webhooks.py::WebhookHandler.handle_invoice_payment_failed"
    assert method.kind == "method"
    assert method.scope == ("class WebhookHandler", "method handle_invoice_payment_failed")
    assert method.parent_id == "shop/webhooks/stripe_webhooks.py::WebhookHandler"
    assert method.docstring == "Record the failed attempt and schedule the next retry."
    header = method.header.splitlines()
    assert header[0] == "# file: shop/webhooks/stripe_webhooks.py"
    assert header[1] == (
        "# scope: module shop.webhooks.stripe_webhooks > class WebhookHandler > method handle_invoice_payment_failed"
    )
    # only the imports the body uses, never the whole import block
    assert header[2] == "# in: class WebhookHandler"  # a method carries its class's signature
    assert "from ..payments.retry import schedule_payment_retry" in header[3]
    assert "verify_signature" not in method.header
    assert "PaymentService" not in method.header


def test_module_chunk_keeps_imports_and_constants():
    ex = extract_file("shop/webhooks/stripe_webhooks.py")
    module = ex.symbols[0]
    assert module.kind == "module"
    assert module.id == "shop/webhooks/stripe_webhooks.py::<module>"
    assert "from ..payments.retry import schedule_payment_retry" in module.text
    assert 'SIGNATURE_HEADER = "Stripe-Signature"' in module.text
    assert "logger = logging.getLogger(__name__)" in module.text
    # definitions are not repeated in the module chunk, only marked
    assert "def stripe_webhook(request: Request) -> Response (lines 88-111)" in module.text
    assert "verify_signature(" not in module.text.split("import verify_signature")[1]


def test_leading_comment_and_missing_docstring():
    ex = extract_file("shop/payments/retry.py")
    backoff = by_qualname(ex)["shop.payments.retry.compute_backoff"]
    assert backoff.start_line == 29  # the two comment lines above the def
    assert backoff.text.startswith("#")
    assert backoff.docstring == ""
    retry = by_qualname(ex)["shop.payments.retry.schedule_payment_retry"]
    assert (retry.start_line, retry.end_line) == (86, 117)
    assert retry.docstring.startswith("Enqueue the next retry of ``payment``")


def test_nested_function_and_decorated_class():
    worker = by_qualname(extract_file("shop/workers/retry_worker.py"))
    inner = worker["shop.workers.retry_worker.run_retry_worker._handle"]
    assert inner.kind == "function"
    assert inner.parent_id == "shop/workers/retry_worker.py::run_retry_worker"
    policy = by_qualname(extract_file("shop/payments/retry.py"))["shop.payments.retry.RetryPolicy"]
    assert policy.kind == "class"
    assert policy.start_line == 37 and policy.text.startswith("@dataclass")


def test_imports_with_aliases_and_relative_levels():
    subs = extract_file("shop/billing/subscriptions.py")
    assert ImportRecord("", "invoices", "inv", 1, 11, column=14) in subs.imports
    sig = extract_file("shop/webhooks/signature.py")
    assert ImportRecord("hashlib", "", "_hashlib", 0, 10, column=7) in sig.imports
    hooks = extract_file("shop/webhooks/stripe_webhooks.py")
    assert ImportRecord("payments.retry", "schedule_payment_retry", "", 2, 14, column=29) in hooks.imports


def test_call_sites_and_bases():
    ex = extract_file("shop/webhooks/stripe_webhooks.py")
    calls = {(c.caller_id.split("::")[1], c.callee, c.line, c.via) for c in ex.calls}
    assert ("WebhookHandler.handle_invoice_payment_failed", "schedule_payment_retry", 60, "call") in calls
    assert ("<module>", "router.route", 88, "decorator") in calls  # the scope that runs the def calls it
    assert ("stripe_webhook", "verify_signature", 95, "call") in calls
    machine = extract_file("shop/billing/state_machine.py")
    bases = {(b.class_id.split("::")[1], b.expr) for b in machine.bases}
    assert ("SubscriptionStateMachine", "StateMachine") in bases  # StateMachine[SubscriptionState]


def test_syntax_error_still_yields_what_parsed():
    ex = extract_source(
        "billing/refunds.py",
        "def refund_invoice(invoice):\n    return invoice.total\n\ndef broken(:\n    pass\n\n"
        "class RefundPolicy:\n    def allows(self, invoice):\n        return refund_invoice(invoice) > 0\n",
    )
    names = {s.qualname for s in ex.symbols}
    assert "billing.refunds.refund_invoice" in names
    assert "billing.refunds.RefundPolicy.allows" in names
    assert ex.warnings and "syntax error near line 4" in ex.warnings[0]


def test_module_constants_are_definitions_of_their_own():
    source = (
        '"""Payment errors."""\n'
        "import logging\n"
        "\n"
        "logger = logging.getLogger(__name__)\n"
        "__all__ = ['CardDeclinedError']\n"
        "\n"
        "# Decline codes where retrying the same card is pointless.\n"
        "HARD_DECLINE_CODES = frozenset(\n"
        '    {"stolen_card", "lost_card"}\n'
        ")\n"
        "MAX_RETRIES: int = 4\n"
        "_DEFAULT_TIMEOUT = 5.0\n"
        "PrimitiveData = int | str\n"
        "\n"
        "\n"
        "def is_hard(code):\n"
        "    LOCAL_LIMIT = 3\n"
        "    return code in HARD_DECLINE_CODES\n"
    )
    ex = extract_source("shop/errors.py", source)
    constants = {s.name: s for s in ex.symbols if s.kind == "constant"}
    # UPPER_CASE names bound at module level; not loggers, dunders, type aliases or function locals
    assert sorted(constants) == ["HARD_DECLINE_CODES", "MAX_RETRIES", "_DEFAULT_TIMEOUT"]
    codes = constants["HARD_DECLINE_CODES"]
    assert (codes.id, codes.qualname) == ("shop/errors.py::HARD_DECLINE_CODES", "shop.errors.HARD_DECLINE_CODES")
    assert (codes.start_line, codes.end_line, codes.def_line) == (7, 10, 8)  # with its leading comment
    assert codes.docstring == "Decline codes where retrying the same card is pointless."
    assert codes.signature == "HARD_DECLINE_CODES = frozenset("
    assert codes.parent_id == "shop/errors.py::<module>" and codes.scope == ("constant HARD_DECLINE_CODES",)
    assert constants["MAX_RETRIES"].signature == "MAX_RETRIES: int = 4"
    # the module chunk still reads in order, constants included; their calls stay the module's
    module = ex.symbols[0]
    assert "HARD_DECLINE_CODES = frozenset(" in module.text and "MAX_RETRIES: int = 4" in module.text
    assert {c.caller_id for c in ex.calls if c.callee == "frozenset"} == {module.id}


def test_a_comment_after_the_header_is_no_part_of_the_signature():
    """A reviewer's note under ``def`` changes the body, not what other files see: the signature and
    the interface freshness compares (so a body edit re-resolves callers, not every file naming it)."""
    from cg.ingest.freshness import interface

    before = (
        "@keep_lazy_text\n"
        "def capfirst(x):\n"
        '    """Capitalize the first letter of a string."""\n'
        "    return x and str(x)[0].upper() + str(x)[1:]\n"
        "\n\nclass Truncator(SimpleLazyObject):\n    def chars(self, num, truncate=None):\n        return num\n"
    )
    after = before.replace("def capfirst(x):\n", "def capfirst(x):  # reviewed\n    # still lazy\n").replace(
        "    def chars(self, num, truncate=None):\n", "    def chars(self, num, truncate=None):  # hot path\n"
    )
    old, new = extract_source("django/utils/text.py", before), extract_source("django/utils/text.py", after)
    signatures = {s.name: s.signature for s in new.symbols}
    assert signatures["capfirst"] == "def capfirst(x)"
    assert signatures["chars"] == "def chars(self, num, truncate=None)"
    assert interface(old) == interface(new)
