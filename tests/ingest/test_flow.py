"""Functions as values and implicit dispatch in the Python resolver: decorators reach their wrappers
and back, a base method's ``self.m()`` reaches the overrides, property reads through a setter reach
the getter, and a value handed to ``max()`` is never a call. Both resolvers must agree where the rule
is the name resolver's own."""

from __future__ import annotations

import heapq

import pytest

from cg.config import load_settings
from cg.ingest.callgraph import build_callgraph, external_name
from cg.ingest.pipeline import extract_repository, resolve_extractions
from cg.ingest.resolve.flow import definition_facts

BILLING = '''
import functools
import heapq


def audited(handler):
    """Logs every invoice the handler touches."""
    @functools.wraps(handler)
    def record(*args, **kwargs):
        return handler(*args, **kwargs)
    return record


def retrying(times):
    def decorate(operation):
        def attempt(*args):
            for _ in range(times):
                return operation(*args)
        return attempt
    return decorate


def registered(hook):
    WEBHOOKS.append(hook)
    return hook


WEBHOOKS = []


@audited
def issue_invoice(order):
    return order


@retrying(times=3)
def capture_payment(invoice):
    return invoice


@registered
def on_refund(event):
    return event


def checkout(order):
    invoice = issue_invoice(order)
    capture_payment(invoice)
    on_refund(invoice)
    return max(invoice, 0.0)


class Gateway:
    def settle(self, amount):
        return self.charge(amount)

    def charge(self, amount):
        return amount

    @property
    def fee(self):
        return 0

    @fee.setter
    def fee(self, value):
        self._fee = value


class StripeGateway(Gateway):
    def __init__(self):
        self.fee = 2

    def charge(self, amount):
        return amount + self.fee


class AdyenGateway(Gateway):
    def settle(self, amount):
        return amount

    def charge(self, amount):
        return amount * 2


def schedule(queue, job):
    heapq.heappush(queue, job)
    return len(queue)


class PaymentDeclined(Exception):
    def __init__(self, reason):
        super().__init__(reason)


class Ledger:
    def __iter__(self):
        return self

    def __next__(self):
        raise StopIteration

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class WebhookNotifier:
    def __call__(self, event):
        return event


def open_ledger() -> Ledger:
    return Ledger()


def reconcile(entries: Ledger):
    for entry in Ledger():
        print(entry)
    with open_ledger() as ledger:
        totals = [line for line in ledger]
    cursor = iter(entries)
    next(cursor)
    notify = WebhookNotifier()
    notify(totals)
    for amount in [1, 2]:
        print(amount)


def decline():
    raise PaymentDeclined


class Coupon:
    def redeem(self, order):
        return order

    def append(self, line):
        return line


class GiftCard:
    def refund(self):
        return 0


class StoreCredit:
    def refund(self):
        return 0


def apply_discounts(coupon, order, card):
    coupon.redeem(order)  # one method in the repository has this name
    coupon.append(order)  # a list has append too: never guessed
    card.refund()  # two methods have this name: never guessed
'''


@pytest.fixture(scope="module", params=["jedi", "name"])
def graph(request, tmp_path_factory):
    root = tmp_path_factory.mktemp(f"billing-{request.param}")
    (root / "billing.py").write_text(BILLING)
    return request.param, build_callgraph(load_settings(root, resolver=request.param, jedi_workers=1))


def test_a_call_of_a_decorated_name_runs_the_wrapper_and_the_wrapper_runs_the_function(graph):
    _, cg = graph
    assert "billing.audited.record" in cg["billing.checkout"]
    assert "billing.issue_invoice" not in cg["billing.checkout"]
    assert "billing.issue_invoice" in cg["billing.audited.record"]
    # a factory: the call's result decorates, and its nested wrapper calls the function
    assert "billing.retrying.decorate.attempt" in cg["billing.checkout"]
    assert "billing.capture_payment" in cg["billing.retrying.decorate.attempt"]
    # a decorator that returns its argument leaves the call where it was
    assert "billing.on_refund" in cg["billing.checkout"]


def test_a_base_method_calling_self_reaches_the_overrides(graph):
    _, cg = graph
    assert set(cg["billing.Gateway.settle"]) >= {"billing.Gateway.charge", "billing.StripeGateway.charge"}


def test_a_base_method_never_dispatches_to_a_subclass_that_overrides_the_base_method_itself(graph):
    """AdyenGateway has its own settle: Gateway.settle never runs with an AdyenGateway as self, so
    its self.charge() cannot reach AdyenGateway.charge (found wrong in flask's precision audit)."""
    _, cg = graph
    assert "billing.AdyenGateway.charge" not in cg["billing.Gateway.settle"]


def test_property_reads_reach_the_getter_even_when_a_setter_follows(graph):
    _, cg = graph
    assert "billing.Gateway.fee" in cg["billing.StripeGateway.charge"]


def test_a_value_handed_to_max_is_not_a_call(graph):
    resolver, cg = graph
    assert not any(callee.endswith("invoice") for callee in cg["billing.checkout"])
    assert "<builtin>.max" in cg["billing.checkout"]


def test_libraries_are_named_by_their_import_path(graph):
    resolver, cg = graph
    assert heapq.heappush.__module__ == "_heapq"  # what jedi reports; the source says `heapq`
    assert cg["billing.schedule"] == ["<builtin>.len", "heapq.heappush"]


def test_statements_reach_the_protocol_methods_they_run(graph):
    _, cg = graph
    assert set(cg["billing.reconcile"]) >= {
        "billing.Ledger.__iter__",
        "billing.Ledger.__next__",
        "billing.Ledger.__enter__",
        "billing.Ledger.__exit__",
        "billing.WebhookNotifier.__call__",
    }
    assert "billing.WebhookNotifier.__init__" not in cg["billing.reconcile"]  # calling an instance is not building one
    assert cg["billing.decline"] == ["billing.PaymentDeclined.__init__"]


def test_a_method_on_an_untyped_parameter_is_guessed_only_when_its_name_is_unique(tmp_path):
    (tmp_path / "billing.py").write_text(BILLING)
    settings = load_settings(tmp_path, resolver="name")
    extractions, _ = extract_repository(settings)
    edges, _ = resolve_extractions(settings, extractions)
    calls = {(e.dst, e.resolved_by) for e in edges if e.type == "CALLS" and e.src == "billing.py::apply_discounts"}
    assert ("billing.py::Coupon.redeem", "unique") in calls
    assert not any("append" in dst or "refund" in dst for dst, how in calls if how != "unresolved")


def test_external_names_follow_the_published_convention():
    assert external_name("builtins.len") == "<builtin>.len"
    assert external_name("json.dumps") == "json.dumps"
    assert external_name("builtins") == "builtins"


def test_definition_facts_read_decorators_parameters_and_returns():
    facts = definition_facts(
        "    # wraps the gateway\n    @retrying(times=3)\n    @audited\n    def capture(self, invoice, *, retries=1):\n"
        "        def inner():\n            return 1\n        return invoice\n"
    )
    assert facts is not None
    assert [(d.expr, d.factory) for d in facts.decorators] == [("retrying", True), ("audited", False)]
    assert facts.parameters == ("self", "invoice", "retries") and facts.returns_parameter
    assert facts.returned == frozenset({"invoice"})
    assert definition_facts("def broken(:\n") is None
