"""Query understanding and ranking on the indexed shop: a question's intent, qualified names pinned
exactly, quoted messages found among string literals, impact questions answered from the call graph,
one result per definition, and examples ranked like tests."""

from __future__ import annotations

import pytest

from cg.ingest.chunk import chunk_file, string_literals
from cg.queries.query import INTENTS, Query, Ranking
from cg.queries.search import apply_priors, message_slot, search

from ..ingest.helpers import extract_source

STRIPE_CHARGE = "shop/payments/gateway.py::StripeGateway.charge"
BASE_CHARGE = "shop/payments/gateway.py::PaymentGateway.charge"
RETRY = "shop/payments/retry.py::schedule_payment_retry"
VALIDATE_COUPON = "shop/billing/coupons.py::validate_coupon"


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("what calls schedule_payment_retry?", "impact"),
        ("who uses StripeGateway.charge", "impact"),
        ("what breaks if I change compute_backoff?", "impact"),
        ("if taking due jobs off the queue returned only one job per call, what would be affected?", "impact"),
        ("where does 'coupon has reached its redemption limit' come from?", "exact"),
        ("StripeGateway.charge", "exact"),
        ("Error: No such command ...", "exact"),
        ("what happens after a card charge fails, does it get retried?", "flow"),
        ("how does a subscription roll over into its next billing period?", "flow"),
        ("where does an invoice get its payment due date?", "location"),
        # "uses" ends a clause here, it has no object: where something is done, not who depends on it
        ("where are the coupon rules applied to decide which discount an invoice uses?", "location"),
        ("which tests use StripeGateway?", "impact"),
    ],
)
def test_a_question_is_parsed_once_with_its_intent(text, intent):
    query = Query.parse(text)
    assert query.intent == intent and query.intent in INTENTS


def test_message_phrases_quoted_or_not_split_at_the_ellipsis():
    assert Query.parse('where does "Did you mean ...?" get printed').phrases == ("Did you mean",)
    assert Query.parse("Error: No such command ...").phrases == ("No such command",)
    assert Query.parse("'x' is not one of ...").phrases == ("x' is not one of",)
    assert Query.parse("where is 'route already registered' raised?").phrases == ("route already registered",)
    # a quoted name is an identifier, not a message
    quoted_name = Query.parse('where is "schedule_payment_retry" defined?')
    assert quoted_name.phrases == () and quoted_name.identifiers == ("schedule_payment_retry",)


def test_a_qualified_name_pins_that_method_alone(ctx):
    store, embedder = ctx
    hits = search(store, embedder, "StripeGateway.charge", limit=5)
    assert hits[0].id == STRIPE_CHARGE and "exact" in hits[0].ranks
    # the base class's charge has the same name but another class: not pinned, not tied
    assert all("exact" not in h.ranks for h in hits[1:])
    assert all(h.score < hits[0].score for h in hits[1:])
    # the class part must match: a dotted path that names no class pins nothing by its last name
    assert search(store, embedder, "PaymentGateway.charge", limit=1)[0].id == BASE_CHARGE
    nothing = search(store, embedder, "Ledger.charge", limit=5)
    assert all("exact" not in h.ranks for h in nothing)
    # a module path works too, and a longer dotted path falls back on Class.method
    assert search(store, embedder, "shop.payments.gateway.StripeGateway.charge", limit=1)[0].id == STRIPE_CHARGE
    assert search(store, embedder, "gateway.StripeGateway.charge", limit=1)[0].id == STRIPE_CHARGE


def test_code_names_inside_a_sentence_are_identifiers():
    # a name in backticks is code even when it is one plain word; so is a CamelCase name led by an acronym
    assert "Invoice" in Query.parse("Add a thread-safety note to the `Invoice` docstring").identifiers
    assert Query.parse("Fix URLPattern examples").identifiers == ("URLPattern",)
    assert Query.parse("retry connects in HTTPTransport when the pool is full").identifiers == ("HTTPTransport",)
    # plural acronyms and capitalised words stay words; so does a lower-case word in backticks, which
    # is as often a parameter or a key as a definition ("treat `body` as an optional key")
    assert Query.parse("Support IPv6 addresses in proxy URLs and IDs").identifiers == ()
    assert Query.parse("Add repr to Cookies for displaying them").identifiers == ()
    assert Query.parse("Warn when `lifespan` is used together with startup handlers").identifiers == ()


def test_a_member_the_code_does_not_have_yet_lands_on_its_class(ctx):
    store, embedder = ctx
    # a commit message or a question about a method to add: the class it belongs on is the answer
    hits = search(store, embedder, "Add Invoice.refunded_total", limit=5)
    assert hits[0].id == "shop/billing/invoices.py::Invoice" and "exact" in hits[0].ranks
    # an attribute is defined where it is assigned: the method that sets it is pinned with the class
    hits = search(store, embedder, "Make Subscription.failed_payment_count a property", limit=5)
    assert {h.id for h in hits[:2]} == {
        "shop/billing/subscriptions.py::Subscription.__init__",
        "shop/billing/subscriptions.py::Subscription",
    }
    assert all("exact" in h.ranks for h in hits[:2])
    # a member that exists is still pinned alone, not with its class
    hits = search(store, embedder, "Subscription.renew", limit=5)
    assert hits[0].id == "shop/billing/subscriptions.py::Subscription.renew"
    assert all("exact" not in h.ranks for h in hits[1:])
    # a class that is not in the code pins nothing
    assert all("exact" not in h.ranks for h in search(store, embedder, "Add Ledger.refunded_total", limit=5))


def test_string_literals_of_a_definition_are_its_own(ctx):
    source = (
        "class Coupons:\n"
        "    def redeem(self, code):\n"
        '        raise InvalidCouponError(f"coupon {code!r} has reached its redemption limit")\n'
        "\n"
        "    label = 'coupon book'\n"
    )
    ex = extract_source("shop/billing/coupon_book.py", source)
    symbols = {s.name: s for s in chunk_file(ex).symbols}
    children = [symbols["redeem"]]
    assert string_literals(symbols["redeem"]) == ["coupon {code!r} has reached its redemption limit"]
    assert string_literals(symbols["Coupons"], children) == ["coupon book"]  # not its method's message
    assert symbols["redeem"].literals == "coupon code r has reach it redempt limit"  # analyzed: words stemmed


def test_a_message_split_over_adjacent_literals_is_one_literal():
    source = (
        "def bind_field(field_name, field_obj):\n"
        "    if isinstance(field_obj, type):\n"
        "        msg = (\n"
        "            f'Field for \"{field_name}\" must be declared as a '\n"
        '            "Field instance, not a class. "\n'
        "            f'Did you mean \"fields.{field_obj.__name__}()\"?'  # type: ignore\n"
        "        )\n"
        "        raise TypeError(msg)\n"
        "    return ['first name', 'last name',\n"
        "            'email']\n"
    )
    sym = next(s for s in chunk_file(extract_source("shop/forms/binding.py", source)).symbols if s.name == "bind_field")
    assert string_literals(sym) == [
        'Field for "{field_name}" must be declared as a Field instance, not a class. '
        'Did you mean "fields.{field_obj.__name__}()"?',
        "first name",
        "last name",
        "email",  # a comma between them: the items of a list, not one message
    ]


def test_a_message_kept_in_a_class_table_is_found_where_it_is_read():
    # marshmallow keeps its messages in class tables; the method that raises one names its key
    table = 'class Field:\n    default_error_messages = {\n        "required": "Missing data for required field.",\n'
    assert message_slot(table, "Missing data for required field") == ("key", "required")
    attribute = 'class OneOf(Validator):\n    default_message = "Must be one of: {choices}."\n'
    assert message_slot(attribute, "Must be one of: {choices}") == ("attr", "default_message")
    assert message_slot(attribute, "Not a valid URL") is None


def test_identifiers_inside_a_quoted_message_are_the_message():
    query = Query.parse("what raises 'must be declared as a Field instance. Did you mean \"fields.String()\"?'")
    assert query.identifiers == () and query.phrases


@pytest.mark.parametrize(
    ("question", "holder"),
    [
        ("where does 'coupon has reached its redemption limit' come from?", VALIDATE_COUPON),
        ("InvalidCouponError: coupon has reached its ... limit", VALIDATE_COUPON),
        (
            "deliveries are being rejected with 'webhook timestamp outside the tolerance zone', where is that?",
            "shop/webhooks/signature.py::verify_signature",
        ),
    ],
)
def test_a_quoted_message_lands_on_the_code_that_holds_the_literal(ctx, question, holder):
    store, embedder = ctx
    hits = search(store, embedder, question, limit=5)
    assert hits[0].id == holder and "literal" in hits[0].ranks, [h.id for h in hits]


def test_impact_questions_rank_the_callers_from_the_graph(ctx):
    store, embedder = ctx
    hits = search(store, embedder, "what calls schedule_payment_retry?", limit=10)
    ids = [h.id for h in hits]
    callers = {
        "shop/payments/service.py::PaymentService.charge_invoice",
        "shop/payments/service.py::PaymentService.retry_failed_payment",
        "shop/webhooks/stripe_webhooks.py::WebhookHandler.handle_invoice_payment_failed",
    }
    assert set(ids[: len(callers)]) == callers, ids  # direct library callers first
    assert all(hits[i].ranks["callers"] == 1 for i in range(len(callers)))
    assert ids.index(RETRY) > max(ids.index(c) for c in callers)  # the symbol itself after its callers
    tests = [i for i, h in enumerate(hits) if h.symbol["path"].startswith("tests/")]
    assert tests and min(tests) > ids.index(RETRY)  # tests after the library callers


def test_one_result_per_definition(ctx):
    store, embedder = ctx
    for question in ("payment retry", "what calls schedule_payment_retry?", "StripeGateway.charge"):
        hits = search(store, embedder, question, limit=10)
        names = [(h.symbol["path"], h.symbol["qualname"]) for h in hits]
        assert len(names) == len(set(names)), question


def test_examples_and_tutorials_count_like_tests():
    example = "examples/quickstart.py::charge_card"
    fused = [(example, 1.0, {}), (STRIPE_CHARGE, 0.8, {})]
    symbols = {
        example: {"kind": "function", "path": "examples/quickstart.py", "file_kind": "source"},
        STRIPE_CHARGE: {"kind": "method", "path": "shop/payments/gateway.py", "file_kind": "source"},
    }
    ranked = apply_priors("how do we charge a card?", fused, symbols, Ranking.default().priors)
    assert [doc for doc, _, _ in ranked] == [STRIPE_CHARGE, example]
