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

from .helpers import write_tree

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


def test_a_method_reached_through_a_fixture_attribute_chain_is_guessed_when_unique(tmp_path):
    """``app.service.charge_invoice(invoice)`` in a test whose ``app`` is a pytest fixture: neither jedi
    nor a stated type knows ``app``, but one class has a ``charge_invoice``, so the chain gets the
    same ``unique`` guess as ``service.charge_invoice`` would (tests reached through fixtures counted
    in impact). A method two unrelated classes define, or a builtin type's, stays unresolved."""
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("")
    (tmp_path / "shop" / "service.py").write_text(
        "class PaymentService:\n"
        "    def charge_invoice(self, invoice):\n        return invoice\n\n"
        "    def refund(self, payment):\n        return payment\n\n\n"
        "class Ledger:\n    def refund(self, entry):\n        return entry\n"
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_webhooks.py").write_text(
        "def test_invoice_paid(app, invoice):\n"
        "    payment = app.service.charge_invoice(invoice)\n"
        "    app.service.refund(payment)\n"
        "    app.queue.append(payment)\n"
    )
    for resolver in ("name", "jedi"):
        settings = load_settings(tmp_path, resolver=resolver, jedi_workers=1)
        extractions, _ = extract_repository(settings)
        edges, _ = resolve_extractions(settings, extractions)
        calls = {
            (e.dst, e.resolved_by)
            for e in edges
            if e.type == "CALLS" and e.src == "tests/test_webhooks.py::test_invoice_paid"
        }
        assert ("shop/service.py::PaymentService.charge_invoice", "unique") in calls, (resolver, calls)
        assert not any("refund" in dst or "append" in dst for dst, how in calls if how != "unresolved"), calls


LEXER = (
    "import json\n"
    "from threading import Lock\n\n\n"
    "class Lexer:\n"
    "    _default_instance = None\n"
    "    _lock = Lock()\n\n"
    "    @classmethod\n"
    "    def get_default_instance(cls):\n"
    "        with cls._lock:\n"
    "            if cls._default_instance is None:\n"
    "                cls._default_instance = cls()\n"
    "        return cls._default_instance\n\n"
    "    def get_tokens(self, text):\n"
    "        return list(text)\n\n"
    "    def raw_decode(self, raw):\n"
    "        return raw\n\n"
    "    def count(self, kind):\n"
    "        return 0\n\n\n"
    "def tokenize(sql):\n"
    "    return Lexer.get_default_instance().get_tokens(sql)\n\n\n"
    "def load_settings(text):\n"
    "    return json.JSONDecoder().raw_decode(text)\n\n\n"
    "def keywords(sql):\n"
    '    return Lexer.get_default_instance().get_tokens(sql).count("SELECT")\n'
)


def calls_by_caller(root, resolver):
    """The CALLS edges of the repository at ``root`` resolved with ``resolver``, by caller (the part of
    its id after the path: ``Scaffold.__init__``)."""
    settings = load_settings(root, resolver=resolver, jedi_workers=1)
    extractions, _ = extract_repository(settings)
    edges, _ = resolve_extractions(settings, extractions)
    out: dict[str, list] = {}
    for e in edges:
        if e.type == "CALLS":
            out.setdefault(e.src.rpartition("::")[2], []).append(e)
    return out


def test_a_method_on_what_a_repository_function_returns_is_guessed_when_unique(tmp_path):
    """``Lexer.get_default_instance().get_tokens(sql)``: a singleton handed out by a classmethod whose
    class attribute starts as ``None``, so jedi infers nothing, and sqlparse's whole lexing path
    (``get_tokens`` and all it calls, run by 257 of its tests) had no caller. What a repository
    function returns is as unknown as an untyped parameter, so the one family that defines the
    method is the same ``unique`` guess; what a library call returns is not (``JSONDecoder().raw_decode``
    below), nor a builtin type's method name."""
    write_tree(tmp_path, {"sqlkit/__init__.py": "", "sqlkit/lexer.py": LEXER})
    for resolver in ("name", "jedi"):
        calls = {src: {(e.dst, e.resolved_by) for e in out} for src, out in calls_by_caller(tmp_path, resolver).items()}
        assert ("sqlkit/lexer.py::Lexer.get_tokens", "unique") in calls["tokenize"], (resolver, calls["tokenize"])
        assert ("sqlkit/lexer.py::Lexer.get_tokens", "unique") in calls["keywords"], (resolver, calls["keywords"])
        loaded = calls["load_settings"]
        assert not any("Lexer.raw_decode" in dst for dst, _ in loaded), (resolver, loaded)
        assert not any(dst.endswith("Lexer.count") for dst, _ in calls["keywords"]), calls["keywords"]  # list.count


SCAFFOLD = """
import os


class Scaffold:
    _static_folder = None

    def __init__(self, root_path, static_folder=None):
        self.root_path = root_path
        self.static_folder = static_folder
        self.retries = 0

    @property
    def static_folder(self):
        if self._static_folder is not None:
            return os.path.join(self.root_path, self._static_folder)
        return None

    @static_folder.setter
    def static_folder(self, value):
        self._static_folder = os.fspath(value).rstrip("/\\\\") if value is not None else None

    @property
    def retries(self):
        return self._retries

    @retries.setter
    def retries(self, value):
        self._retries = value


def configure(app: Scaffold, folder):
    app.static_folder = folder
    app.root_path = folder


def retry(app: Scaffold):
    app.retries += 1
"""


def test_assigning_a_property_runs_its_setter(tmp_path):
    """``self.static_folder = static_folder`` in Flask's ``Scaffold.__init__`` runs the setter, which
    every test that makes an app runs (333 of Flask's); the graph had no edge into it, so ``cg
    impact`` on the setter listed no test. An augmented assignment runs the getter and the setter; a
    plain attribute (``root_path``) runs nothing."""
    (tmp_path / "scaffold.py").write_text(SCAFFOLD)
    for resolver in ("name", "jedi"):
        calls = {
            src: {(e.dst.rpartition("::")[2], e.line) for e in out}
            for src, out in calls_by_caller(tmp_path, resolver).items()
        }
        init = calls["Scaffold.__init__"]
        assert ("Scaffold.static_folder~2", 10) in init, (resolver, init)  # the setter, the second definition
        assert ("Scaffold.static_folder", 10) not in init, (resolver, init)  # not the getter
        assert ("Scaffold.retries~2", 11) in init, (resolver, init)
        assert ("Scaffold.static_folder~2", 33) in calls["configure"], (resolver, calls["configure"])
        assert not any("root_path" in dst for dst, _ in calls["configure"])
        assert {dst for dst, _ in calls["retry"]} == {"Scaffold.retries", "Scaffold.retries~2"}, calls["retry"]


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


PRICING = """
SURCHARGES = {"card": lambda cents: cents * 3 // 100, "sepa": lambda cents: 35}
LABELS = {"€": lambda cents: f"{cents / 100:.2f} €"}  # non-ASCII before the lambda: jedi counts characters


def surcharge(method, cents):
    return SURCHARGES[method](cents)


def label(cents):
    return LABELS["€"](cents)


def make_coupon_check(minimum):
    return lambda order: order["total"] >= minimum


def accepts_coupon(order):
    check = make_coupon_check(5000)
    return check(order)


def apply_to_invoices(invoices, adjust):
    return [adjust(invoice) for invoice in invoices]


def discounted(invoices):
    return apply_to_invoices(invoices, lambda invoice: invoice["total"] * 9 // 10)


class WebhookFilter:
    def __init__(self):
        self.rules = [lambda event: event.strip(), lambda event: event.lower()]

    def run(self, event):
        for index in range(len(self.rules)):
            event = self.rules[index](event)
        return event
"""


def test_a_lambda_stored_returned_or_passed_is_reached_where_it_is_called(tmp_path):
    """jedi infers a stored, returned or passed lambda to the position of its ``lambda`` keyword; that
    position names the lambda definition, so the call of the dict entry, the list item, the factory's
    result or the parameter reaches it."""
    (tmp_path / "pricing.py").write_text(PRICING)
    cg = build_callgraph(load_settings(tmp_path, resolver="jedi", jedi_workers=1))
    assert set(cg["pricing.surcharge"]) == {"pricing.<lambda1>", "pricing.<lambda2>"}
    assert cg["pricing.label"] == ["pricing.<lambda3>"]
    assert cg["pricing.accepts_coupon"] == ["pricing.make_coupon_check", "pricing.make_coupon_check.<lambda1>"]
    assert cg["pricing.apply_to_invoices"] == ["pricing.discounted.<lambda1>"]
    assert set(cg["pricing.WebhookFilter.run"]) == {
        "<builtin>.len",
        "<builtin>.range",
        "pricing.WebhookFilter.__init__.<lambda1>",
        "pricing.WebhookFilter.__init__.<lambda2>",
    }


RULES = """
from itertools import groupby


class FraudRule:
    def __init__(self, check=None):
        self._check = check or (lambda payment: True)

    def allows(self, payment):
        return self._check(payment)


def by_customer(payments):
    return [list(group) for _, group in groupby(payments, key=lambda payment: payment.customer)]
"""


@pytest.mark.parametrize("resolver", ["jedi", "name"])
def test_a_lambda_behind_or_or_handed_to_an_imported_itertools_function_is_reached(tmp_path, resolver):
    """`self._check = check or (lambda p: True)`: the attribute may hold the lambda, so calling it may run
    the lambda; `groupby(..., key=lambda ...)` imported from itertools calls its key."""
    (tmp_path / "rules.py").write_text(RULES)
    cg = build_callgraph(load_settings(tmp_path, resolver=resolver, jedi_workers=1))
    assert "rules.FraudRule.__init__.<lambda1>" in cg["rules.FraudRule.allows"]
    assert "rules.by_customer.<lambda1>" in cg["rules.by_customer"]


HOOKS = """
WEBHOOKS = {}


def on_event(event_type):
    def attach(handler):
        WEBHOOKS[event_type] = handler
        return handler

    return attach
"""

ROUTES = """
from hooks import on_event


class Router:
    def __init__(self):
        self.views = {}

    def route(self, path):
        def register(view):
            self.views[path] = view
            return view

        return register


class RateLimit:
    def __init__(self, per_minute):
        self.per_minute = per_minute

    def __call__(self, view):
        return view


router = Router()


class InvoiceViews:
    @router.route("/invoices")
    def list_invoices(self):
        return []


@on_event("invoice.paid")
@RateLimit(per_minute=60)
def mark_paid(event):
    return event
"""


@pytest.mark.parametrize("resolver", ["jedi", "name"])
def test_the_scope_also_calls_what_a_decorator_factory_returns(tmp_path, resolver):
    """``@router.route("/invoices")`` runs ``router.route(...)`` and then, with the function, the
    ``register`` it returns; a class factory's instance is called through ``__call__``. Both calls
    are the defining scope's (the class body, the module), and an imported factory counts alike."""
    (tmp_path / "hooks.py").write_text(HOOKS)
    (tmp_path / "routes.py").write_text(ROUTES)
    cg = build_callgraph(load_settings(tmp_path, resolver=resolver, jedi_workers=1))
    assert set(cg["routes.InvoiceViews"]) == {"routes.Router.route", "routes.Router.route.register"}
    assert set(cg["routes"]) >= {
        "hooks.on_event",
        "hooks.on_event.attach",
        "routes.RateLimit.__init__",
        "routes.RateLimit.__call__",
    }
    assert "routes.Router.route.register" not in cg["routes"]  # the class body applies it, not the module


RATES = """
class memoized:
    def __init__(self, lookup):
        self.lookup = lookup
        self.cache = {}

    def __call__(self, *args):
        if args not in self.cache:
            self.cache[args] = self.lookup(*args)
        return self.cache[args]


class traced:
    def __init__(self, handler):
        self.calls = 0

    def __call__(self, *args):
        self.calls += 1


@memoized
def exchange_rate(source, target):
    return 1.0


@traced
def refund_fee(amount):
    return amount // 100


def invoice_total(amount, source, target):
    return refund_fee(amount * exchange_rate(source, target))
"""


@pytest.mark.parametrize("resolver", ["jedi", "name"])
def test_a_class_as_decorator_is_called_through_its_instance(tmp_path, resolver):
    """``@memoized def exchange_rate`` binds the name to a ``memoized`` instance: a call of it runs
    ``__call__``, and ``__call__``'s call of the attribute ``__init__`` stored the function in runs the
    function. A class that keeps no attribute of it (``traced``) never runs the function."""
    (tmp_path / "rates.py").write_text(RATES)
    cg = build_callgraph(load_settings(tmp_path, resolver=resolver, jedi_workers=1))
    assert set(cg["rates.invoice_total"]) == {"rates.memoized.__call__", "rates.traced.__call__"}
    assert cg["rates.memoized.__call__"] == ["rates.exchange_rate"]
    assert cg["rates.traced.__call__"] == []
    assert set(cg["rates"]) >= {"rates.memoized.__init__", "rates.traced.__init__"}


def test_definition_facts_read_which_attribute_keeps_a_parameter():
    facts = definition_facts("def __init__(self, lookup, ttl):\n    self.fetch = lookup\n    retries = ttl\n")
    assert facts is not None and facts.stored == (("lookup", "fetch"),)


REGISTRY = """
from hooks import on_event, WEBHOOKS

HANDLERS = {}


def handles(event_type):
    def attach(handler):
        HANDLERS[event_type] = handler
        return handler

    return attach


class Router:
    def __init__(self):
        self.views = {}

    def route(self, path):
        def register(view):
            self.views[path] = view
            return view

        return register

    def dispatch(self, path, request):
        return self.views[path](request)


router = Router()


@handles("invoice.paid")
def mark_paid(event):
    return event


@handles("charge.refunded")
def issue_credit_note(event):
    return event


@on_event("coupon.redeemed")
def redeem_coupon(event):
    return event


class InvoiceViews:
    @router.route("/invoices")
    def list_invoices(request):
        return []


def deliver(event_type, event):
    SKIPPED = {}
    SKIPPED[event_type] = event
    return HANDLERS[event_type](event)


def deliver_external(event_type, event):
    return WEBHOOKS[event_type](event)
"""


@pytest.mark.parametrize("resolver", ["jedi", "name"])
def test_a_registry_a_decorator_fills_is_called_where_it_is_read(tmp_path, resolver):
    """``HANDLERS[event_type] = handler`` in a decorator makes ``HANDLERS`` a registry of the functions it
    decorates: ``HANDLERS[kind](event)`` may run any of them; so may ``self.views[path](request)`` for
    the views ``@router.route`` registers from another class's body, and a registry imported from
    another module."""
    (tmp_path / "hooks.py").write_text(HOOKS)
    (tmp_path / "webhooks.py").write_text(REGISTRY)
    cg = build_callgraph(load_settings(tmp_path, resolver=resolver, jedi_workers=1))
    assert set(cg["webhooks.deliver"]) == {"webhooks.mark_paid", "webhooks.issue_credit_note"}
    assert cg["webhooks.deliver_external"] == ["webhooks.redeem_coupon"]
    assert cg["webhooks.Router.dispatch"] == ["webhooks.InvoiceViews.list_invoices"]
    assert set(cg["webhooks.InvoiceViews"]) == {"webhooks.Router.route", "webhooks.Router.route.register"}


AGEING = """
class DueDateKey:
    def __init__(self, field="due"):
        self.field = field

    def __call__(self, invoice):
        return invoice[self.field]


def by_age(today):
    return lambda invoice: today - invoice["issued"]


def due_date_key() -> DueDateKey:
    return DueDateKey()


def oldest_first(invoices, today):
    return sorted(invoices, key=by_age(today))


def soonest_due(invoices):
    return sorted(invoices, key=due_date_key())
"""


@pytest.mark.parametrize("resolver", ["jedi", "name"])
def test_a_higher_order_builtin_calls_what_a_call_in_its_slot_returns(tmp_path, resolver):
    """``sorted(invoices, key=by_age(today))`` runs the lambda ``by_age`` returns (jedi says which); an
    instance in that slot is called through ``__call__``. Without jedi nothing is guessed: never the
    class or its constructor, which the call of the factory, not ``sorted``, runs."""
    (tmp_path / "ageing.py").write_text(AGEING)
    cg = build_callgraph(load_settings(tmp_path, resolver=resolver, jedi_workers=1))
    if resolver == "jedi":
        assert cg["ageing.oldest_first"] == ["<builtin>.sorted", "ageing.by_age", "ageing.by_age.<lambda1>"]
        assert cg["ageing.soonest_due"] == ["<builtin>.sorted", "ageing.DueDateKey.__call__", "ageing.due_date_key"]
    else:
        assert cg["ageing.oldest_first"] == ["<builtin>.sorted", "ageing.by_age"]
        assert cg["ageing.soonest_due"] == ["<builtin>.sorted", "ageing.due_date_key"]


CHECKOUT = """
class PaymentProvider:
    def capture(self, cents):
        raise NotImplementedError


class CardProvider(PaymentProvider):
    def capture(self, cents):
        return cents


class WalletProvider(PaymentProvider):
    def capture(self, cents):
        return cents * 2


class AuditedCardProvider(CardProvider):
    def capture(self, cents):
        return CardProvider.capture(self, cents)


class Checkout:
    def __init__(self, provider: PaymentProvider):
        self.provider = provider

    def pay(self, cents):
        return self.provider.capture(cents)


def settle(provider: PaymentProvider, cents):
    return provider.capture(cents)
"""


@pytest.mark.parametrize("resolver", ["jedi", "name"])
def test_a_call_on_a_typed_receiver_may_run_every_subclass_override(tmp_path, resolver):
    """`self.provider.capture()` on a PaymentProvider reaches the base method and, as dispatch edges,
    each subclass's capture; `CardProvider.capture(self, ...)` names its class and runs only that one."""
    (tmp_path / "checkout.py").write_text(CHECKOUT)
    cg = build_callgraph(load_settings(tmp_path, resolver=resolver, jedi_workers=1))
    overrides = {
        "checkout.CardProvider.capture",
        "checkout.WalletProvider.capture",
        "checkout.AuditedCardProvider.capture",
    }
    assert set(cg["checkout.Checkout.pay"]) >= {"checkout.PaymentProvider.capture", *overrides}
    assert set(cg["checkout.settle"]) >= {"checkout.PaymentProvider.capture", *overrides}
    assert cg["checkout.AuditedCardProvider.capture"] == ["checkout.CardProvider.capture"]


LEDGER = """
class Money:
    def __init__(self, cents):
        self.cents = cents

    def __add__(self, other):
        return Money(self.cents + other.cents)

    def __eq__(self, other):
        return self.cents == other.cents


class Ledger:
    def __init__(self):
        self.entries = {}

    def __getitem__(self, account) -> Money:
        return self.entries[account]

    def __setitem__(self, account, amount):
        self.entries[account] = amount

    def __contains__(self, account):
        return account in self.entries

    def __len__(self):
        return len(self.entries)


def post_fee(ledger: Ledger, account, fee: Money):
    if account in ledger:
        ledger[account] = ledger[account] + fee
    return len(ledger)


def fee_total(fees: list, fee: Money):
    count = len(fees) + 1
    return fee == fee, fees[0], count
"""


@pytest.mark.parametrize("resolver", ["jedi", "name"])
def test_operators_subscripts_and_len_run_the_dunders_the_repository_defines(tmp_path, resolver):
    """`account in ledger`, `ledger[k]`, `ledger[k] = v` and `len(ledger)` on a Ledger run its dunders;
    `a + b` and `a == b` on Money run Money's; the same operators on a list or an int run nothing of the
    repository, so they are no edges."""
    (tmp_path / "ledger.py").write_text(LEDGER)
    cg = build_callgraph(load_settings(tmp_path, resolver=resolver, jedi_workers=1))
    ledger = {"ledger.Ledger.__contains__", "ledger.Ledger.__getitem__", "ledger.Ledger.__setitem__"}
    assert set(cg["ledger.post_fee"]) >= ledger | {"ledger.Ledger.__len__"}
    assert "ledger.Money.__eq__" in cg["ledger.fee_total"]
    assert not any(callee.startswith("ledger.Ledger") for callee in cg["ledger.fee_total"])
    if resolver == "jedi":  # what `ledger[account]` returns is jedi's to infer (the annotation says Money)
        assert "ledger.Money.__add__" in cg["ledger.post_fee"]


CART = """
class Cart:
    def __init__(self, lines):
        self.lines = lines

    def __len__(self):
        return len(self.lines)


class Coupon:
    def __init__(self, code):
        self.code = code

    def __bool__(self):
        return bool(self.code)

    def __len__(self):
        return len(self.code)


def checkout(cart: Cart, coupon: Coupon, note: str):
    if not cart:
        return None
    discount = 5 if coupon else 0
    while note and coupon:
        note = note[:-1]
    return discount
"""


@pytest.mark.parametrize("resolver", ["jedi", "name"])
def test_a_truth_test_runs_bool_else_len(tmp_path, resolver):
    """`if not cart`, `x if coupon else y` and `a and b` test truth: Python calls `__bool__`, or `__len__`
    when the class has no `__bool__`; a str operand runs nothing of the repository."""
    (tmp_path / "cart.py").write_text(CART)
    cg = build_callgraph(load_settings(tmp_path, resolver=resolver, jedi_workers=1))
    assert {"cart.Cart.__len__", "cart.Coupon.__bool__"} <= set(cg["cart.checkout"])
    assert "cart.Coupon.__len__" not in cg["cart.checkout"]  # __bool__ comes first


def test_a_repository_reached_through_a_symlink_resolves_as_well(tmp_path):
    """jedi reports module paths with symlinks resolved: indexing through a symlinked folder must map its
    answers into the repository just the same (it once lost every jedi edge)."""
    real = tmp_path / "real"
    real.mkdir()
    (real / "checkout.py").write_text(CHECKOUT)
    (tmp_path / "linked").symlink_to(real, target_is_directory=True)
    direct = build_callgraph(load_settings(real, resolver="jedi", jedi_workers=1))
    linked = build_callgraph(load_settings(tmp_path / "linked", resolver="jedi", jedi_workers=1))
    assert linked == direct
    assert "checkout.CardProvider.capture" in linked["checkout.settle"]


SETTINGS = '''
import typing as t

T = t.TypeVar("T")


class ConfigAttribute(t.Generic[T]):
    """Forwards an attribute to the app's config."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj, owner=None):
        return obj.config[self.name]


class App:
    testing = ConfigAttribute[bool]("TESTING")
    secret_key = ConfigAttribute("SECRET_KEY")

    def __init__(self):
        self.config = {"TESTING": False, "SECRET_KEY": "dev"}
        self.debug = False

    def should_propagate(self):
        return self.testing or self.debug


class Flask(App):
    def secret_key(self):
        return "overridden"


def sign(app: App, payload):
    return (app.secret_key, payload)


def sign_flask(app: Flask):
    return app.secret_key
'''


@pytest.mark.parametrize("resolver", ["jedi", "name"])
def test_reading_a_class_attribute_bound_to_a_descriptor_runs_its_get(tmp_path, resolver):
    """`self.testing`, where the class body says `testing = ConfigAttribute[bool](...)`, runs
    ConfigAttribute.__get__, as does `app.secret_key` on a typed `app`; an instance attribute
    (`self.debug`) or a method of the same name found first in the MRO does not."""
    (tmp_path / "settings.py").write_text(SETTINGS)
    cg = build_callgraph(load_settings(tmp_path, resolver=resolver, jedi_workers=1))
    assert "settings.ConfigAttribute.__get__" in cg["settings.App.should_propagate"]
    assert "settings.ConfigAttribute.__get__" in cg["settings.sign"]
    assert "settings.ConfigAttribute.__get__" not in cg["settings.sign_flask"]
    assert "settings.ConfigAttribute.__get__" not in cg["settings.App.__init__"]


SQL_FILTERS = """
class Token:
    def __init__(self, kind, value):
        self.kind, self.value = kind, value

    def matches(self, kind):
        return self.kind == kind

    def flattened(self):
        yield self


class TokenGroup(Token):
    def flattened(self):
        for token in self.tokens:
            yield from token.flattened()


class AliasMixin:
    def alias(self):
        return self.last_word()


class Expression(TokenGroup):
    def last_word(self):
        return self.tokens[-1]

    def display_name(self):
        return self.alias()


class Column(AliasMixin, Expression):
    pass


class Reindent:
    def _format_where(self, group):
        return group

    def _format_select(self, group):
        return group

    def _format_default(self, group):
        return group

    def process(self, group):
        method_name = "_format_{kind}".format(kind=type(group).__name__)
        handler = getattr(self, method_name.lower(), self._format_default)
        return handler(group)

    def process_any(self, group, name):
        handler = getattr(self, name)
        return handler(group)


class StripComments:
    def process(self, group):
        return group


class Pipeline:
    def __init__(self):
        self.filters = []
        self.finishers = []

    def run(self, group):
        for stage in self.filters:
            group = stage.process(group)
        for stage in self.finishers:
            group = stage.finish(group)
        return group


class Serializer:
    def finish(self, group):
        return str(group)


def keywords(statement):
    found = []
    for item in statement.flattened():
        current = item
        if current.matches("keyword"):
            found.append(item)
    return found


def audited(method):
    def record(self, *args):
        return method(self, *args)
    return record


class Ledger:
    @audited
    def save(self, entry):
        return entry

    def commit(self, entry):
        return self.save(entry)


class CachedLedger(Ledger):
    pass


def build(pipeline, reindent):
    pipeline.filters.append(StripComments())
    pipeline.filters.append(Reindent())
    pipeline.finishers.append(Serializer())
    return pipeline
"""


@pytest.fixture(scope="module")
def sql_calls(tmp_path_factory):
    root = tmp_path_factory.mktemp("sqlfilters")
    (root / "sqlfilters.py").write_text(SQL_FILTERS)
    settings = load_settings(root, resolver="name")
    extractions, _ = extract_repository(settings)
    edges, _ = resolve_extractions(settings, extractions)
    calls: dict[str, set[tuple[str, str]]] = {}
    for e in edges:
        if e.type == "CALLS" and e.resolved_by != "unresolved":
            calls.setdefault(e.src.removeprefix("sqlfilters.py::"), set()).add(
                (e.dst.removeprefix("sqlfilters.py::"), e.resolved_by)
            )
    return calls


def test_a_method_on_an_untyped_local_reaches_the_one_family_that_defines_it(sql_calls):
    # `matches` has one definition; `flattened` is Token's and TokenGroup's override: both may run
    assert ("Token.matches", "unique") in sql_calls["keywords"]
    assert {("Token.flattened", "unique"), ("TokenGroup.flattened", "unique")} <= sql_calls["keywords"]
    # `process` is defined by three unrelated classes: nothing is guessed for an untyped receiver
    assert not any(dst.endswith(".process") for dst, _ in sql_calls.get("keywords", ()))


def test_getattr_with_a_constant_start_reaches_the_methods_of_that_prefix_and_the_default(sql_calls):
    assert {
        ("Reindent._format_where", "dispatch"),
        ("Reindent._format_select", "dispatch"),
        ("Reindent._format_default", "dispatch"),
    } <= sql_calls["Reindent.process"]
    # a name with no constant start says nothing of which method runs
    assert not any(dst.startswith("Reindent.") for dst, _ in sql_calls.get("Reindent.process_any", ()))


def test_a_base_method_reaches_a_mixin_method_of_its_subclasses_and_back(sql_calls):
    assert ("AliasMixin.alias", "dispatch") in sql_calls["Expression.display_name"]
    assert ("Expression.last_word", "dispatch") in sql_calls["AliasMixin.alias"]


def test_a_loop_over_a_container_attribute_runs_what_the_repository_appends_to_it(sql_calls):
    assert {("StripComments.process", "name"), ("Reindent.process", "name")} <= sql_calls["Pipeline.run"]
    # the second loop reuses the variable's name over another container: each call its own loop's
    assert ("Serializer.finish", "name") in sql_calls["Pipeline.run"]


def test_a_subclass_inheriting_a_decorated_method_adds_no_dispatch_edge_past_the_wrapper(sql_calls):
    assert ("audited.record", "name") in sql_calls["Ledger.commit"]
    assert not any(how == "dispatch" for _, how in sql_calls["Ledger.commit"])


def test_definition_facts_of_a_method_whose_string_holds_lines_at_column_zero():
    """``dedent`` cannot take the method's indentation away (the template's lines sit at column 0):
    its facts are still read, its lines counted in its own text."""
    facts = definition_facts(
        "    @override_settings(\n        TEMPLATES=[],\n    )\n    def test_sitemap_renders(self):\n"
        '        expected = """<?xml version="1.0"?>\n<urlset>\n</urlset>"""\n'
        "        for url in self.urls:\n            check(url)\n        return expected\n"
    )
    assert facts is not None
    assert [(d.expr, d.factory) for d in facts.decorators] == [("override_settings", True)]
    assert facts.loops == (("url", "self.urls", 8, 9),) and facts.returned == frozenset({"expected"})


DECORATED_VIEWS = '''
import functools


def get_router():
    return ROUTER


def audited(handler):
    @functools.wraps(handler)
    def record(*args, **kwargs):
        return handler(*args, **kwargs)
    return record


class Router:
    def route(self, path):
        def attach(view):
            return view
        return attach


ROUTER = Router()


@get_router().route("/invoices")
@audited
def list_invoices(request):
    return []


class InvoiceAdmin:
    @audited
    @functools.lru_cache(maxsize=32)
    def totals(self):
        return 0

    @property
    def overdue(self):
        """Invoices past their due date:
older than thirty days."""
        return []
'''


def test_the_decorators_the_resolver_reads_without_parsing_are_the_parsed_ones(tmp_path):
    """The whole-repository decorator pass reads plain dotted decorators from the extractor's records
    and parses only the others (``@get_router().route``): the same decorators either way."""
    from cg.ingest.resolve.python import Resolver

    (tmp_path / "invoices.py").write_text(DECORATED_VIEWS)
    extractions = extract_repository(load_settings(tmp_path))[0]
    resolver = Resolver(extractions)
    decorated = [s for s in resolver.by_id.values() if s.decorators]
    assert {s.name for s in decorated} == {"record", "list_invoices", "totals", "overdue"}
    for func in decorated:
        parsed = definition_facts(func.text)
        assert parsed is not None and resolver.decorators_of(func) == parsed.decorators, func.id
    routed = resolver.decorators_of(resolver.by_qualname["invoices.list_invoices"])
    assert routed is not None and [d.expr for d in routed] == ["get_router().route", "audited"]


def _walk_for(node, kind):
    """The per-kind walk the facts used before they shared one walk: the reference."""
    import ast

    out, stack = [], list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        if isinstance(child, kind):
            out.append(child)
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(child))
    return out


def test_the_shared_walk_finds_what_a_walk_per_kind_finds_on_real_code():
    """Every definition of cg's own resolver and pipeline, every node kind the facts ask for: the one
    shared walk, filtered, gives the same nodes in the same order as walking the tree for each kind."""
    import ast
    from pathlib import Path

    from cg.ingest.resolve import flow

    kinds = (ast.Return, ast.For, ast.AsyncFor, ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
    kinds += (ast.Call, ast.Name, ast.Assign, ast.Lambda, ast.FunctionDef, ast.expr, ast.stmt)
    root = Path(flow.__file__).resolve().parents[1]
    checked = 0
    for path in [*root.glob("resolve/*.py"), root / "pipeline.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                own = flow._own_nodes(node)
                for kind in kinds:
                    assert flow._own(own, kind) == _walk_for(node, kind), (path.name, node.name, kind)
                checked += 1
    assert checked > 200
