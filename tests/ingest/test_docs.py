"""Documents split at headings, and the definitions a section names."""

from __future__ import annotations

from cg.ingest.docs import MentionIndex, split_document
from cg.model import Symbol

RUNBOOK = """Operations notes for the billing service.

# Billing runbook

## Retrying a stuck invoice

Run the worker by hand:

```sh
# this is a shell comment, not a heading
python -m shop.workers.retry_worker --once
```

## Webhooks

Stripe signs every delivery; `verify_signature` rejects stale timestamps.

Rotating secrets
----------------

Update STRIPE_WEBHOOK_SECRET, then redeploy.

## Webhooks

A second section with the same heading.
"""


def test_markdown_sections_follow_headings_not_code_comments():
    sections = split_document("docs/runbook.md", RUNBOOK, "markdown")
    assert [(s.heading_path, s.start_line, s.end_line) for s in sections] == [
        (("runbook.md",), 1, 2),
        (("Billing runbook",), 3, 4),
        (("Billing runbook", "Retrying a stuck invoice"), 5, 13),
        (("Billing runbook", "Webhooks"), 14, 17),
        (("Billing runbook", "Rotating secrets"), 18, 22),  # a setext "---" heading is level 2
        (("Billing runbook", "Webhooks"), 23, 25),
    ]
    assert "# this is a shell comment" in sections[2].text
    assert sections[3].id == "docs/runbook.md::Billing runbook > Webhooks"
    assert sections[5].id == "docs/runbook.md::Billing runbook > Webhooks~2"
    assert "stripewebhooksecret" in sections[4].search_text.split()  # identifiers are analyzed like code
    assert sections[4].embed_text.startswith("docs/runbook.md > Billing runbook > Rotating secrets\n")


def test_rst_headings_and_long_sections_cut_at_paragraphs():
    body = "\n\n".join(f"Paragraph {n} about invoice reminders. " * 8 for n in range(12))
    text = f"Invoices\n========\n\nIntro.\n\nReminders\n---------\n\n{body}\n"
    sections = split_document("docs/invoices.rst", text, "rst", max_chars=1000)
    assert sections[0].heading_path == ("Invoices",)
    parts = [s for s in sections if s.title == "Reminders"]
    assert len(parts) > 2 and all(len(p.text) < 1400 for p in parts)
    assert parts[1].id.endswith("Invoices > Reminders (part 2)")
    assert all(p.text.strip() and not p.text.startswith("\n") for p in parts)
    assert parts[-1].end_line == len(text.splitlines())


def _symbol(qualname: str, kind: str = "function") -> Symbol:
    path = "shop/" + qualname.split(".")[1] + ".py"
    scope = ".".join(qualname.split(".")[2:])
    return Symbol(f"{path}::{scope}", scope.split(".")[-1], qualname, kind, path, 1, 2, "", "", "", "")


def test_mentions_are_conservative():
    index = MentionIndex(
        [
            _symbol("shop.retry.schedule_payment_retry"),
            _symbol("shop.retry.RetryPolicy", "class"),
            _symbol("shop.retry.RetryPolicy.delay_for", "method"),
            _symbol("shop.gateway.FakeGateway.charge", "method"),
            _symbol("shop.gateway.StripeGateway.charge", "method"),
            _symbol("shop.models.Payment.cancel", "method"),
            _symbol("shop.billing.Subscription.cancel", "method"),
        ]
    )
    text = (
        "A charge that fails is handed to schedule_payment_retry, which asks RetryPolicy.delay_for; "
        "customers may cancel at any time. Use `cancel()` on either object, or `StripeGateway.charge`."
    )
    assert index.mentions(text) == sorted(
        [
            "shop/retry.py::schedule_payment_retry",
            "shop/retry.py::RetryPolicy.delay_for",
            "shop/retry.py::RetryPolicy",  # the class a dotted name starts with is named too
            "shop/gateway.py::StripeGateway.charge",
            "shop/models.py::Payment.cancel",  # written as code: both cancel() methods
            "shop/billing.py::Subscription.cancel",
        ]
    )
    assert index.mentions("Payments are charged and may be cancelled.") == []
