"""Python extraction semantics: who calls a decorator, lambdas as definitions, and a walker that survives
trees thousands of levels deep."""

from __future__ import annotations

from cg.ingest.chunk import chunk_file
from cg.ingest.resolve.python import Resolver
from cg.model import CallableValue, Decoration

from .helpers import extract_source

WEBHOOKS = '''"""Stripe webhooks for invoices."""
from shop.http.routes import router
from shop.payments.retry import retry_on_decline, audited


@router.route("/webhooks/stripe", methods=allowed_methods())
@audited
def invoice_paid(event, on_error=lambda exc: log_failure(exc)):
    """Mark the invoice paid."""
    handlers = {"invoice.paid": lambda e: mark_paid(e.invoice)}
    overdue = sorted(event.invoices, key=lambda invoice: invoice.due_date)
    total = sum(line.amount_cents for line in event.lines if is_billable(line))
    return handlers[event.type](event)


class InvoiceService:
    @retry_on_decline
    def charge(self, invoice):
        notify = lambda: self.mailer.send(invoice, lambda receipt: render_receipt(receipt))
        notify()

    by_total = lambda invoice: invoice.total_cents


sort_key = lambda invoice: invoice.due_date
'''


def calls_of(ex, caller: str) -> set[tuple[str, str]]:
    return {(c.callee, c.via) for c in ex.calls if c.caller_id == f"shop/webhooks/invoices.py::{caller}"}


def test_a_decorator_is_called_by_the_scope_that_defines_the_function():
    ex = extract_source("shop/webhooks/invoices.py", WEBHOOKS)
    module = calls_of(ex, "<module>")
    assert {("router.route", "decorator"), ("audited", "decorator"), ("allowed_methods", "call")} <= module
    assert not any(via == "decorator" for _, via in calls_of(ex, "invoice_paid"))
    assert ("retry_on_decline", "decorator") in calls_of(ex, "InvoiceService")  # the class body runs the def
    assert not any(via == "decorator" for _, via in calls_of(ex, "InvoiceService.charge"))
    site = next(c for c in ex.calls if c.callee == "router.route")
    assert site.decorates == "shop/webhooks/invoices.py::invoice_paid"
    assert (site.line, site.column) == (6, 8)  # `route`, where jedi is asked


def test_decorations_record_the_stack_order_and_factories():
    ex = extract_source("shop/webhooks/invoices.py", WEBHOOKS)
    handler = "shop/webhooks/invoices.py::invoice_paid"
    module = "shop/webhooks/invoices.py::<module>"
    assert [d for d in ex.decorations if d.decorated_id == handler] == [
        Decoration(module, handler, "router.route", 6, 8, order=1, factory=True),
        Decoration(module, handler, "audited", 7, 1, order=0, factory=False),  # nearest the def: applied first
    ]
    charge = next(d for d in ex.decorations if d.decorated_id.endswith("InvoiceService.charge"))
    assert charge.scope_id == "shop/webhooks/invoices.py::InvoiceService" and not charge.factory
    symbols = {s.qualname: s for s in ex.symbols}
    assert symbols["shop.webhooks.invoices.invoice_paid"].decorators == ("router.route", "audited")


def test_lambdas_are_definitions_named_by_their_enclosing_scope():
    ex = extract_source("shop/webhooks/invoices.py", WEBHOOKS)
    lambdas = {s.qualname: s for s in ex.symbols if s.kind == "lambda"}
    mod = "shop.webhooks.invoices"
    assert sorted(lambdas) == sorted(
        [
            f"{mod}.<lambda1>",  # on_error's default: evaluated by the module, where the def runs
            f"{mod}.invoice_paid.<lambda1>",
            f"{mod}.invoice_paid.<lambda2>",
            f"{mod}.InvoiceService.charge.<lambda1>",
            f"{mod}.InvoiceService.charge.<lambda1>.<lambda1>",  # a lambda inside a lambda
            f"{mod}.InvoiceService.<lambda1>",
            f"{mod}.<lambda2>",
        ]
    )
    inner = lambdas[f"{mod}.InvoiceService.charge.<lambda1>.<lambda1>"]
    outer = lambdas[f"{mod}.InvoiceService.charge.<lambda1>"]
    assert inner.parent_id == outer.id and outer.parent_id == "shop/webhooks/invoices.py::InvoiceService.charge"
    assert inner.text == "lambda receipt: render_receipt(receipt)" and inner.signature == "lambda receipt"
    assert outer.signature == "lambda" and inner.name == "<lambda1>"
    assert inner.scope == ("class InvoiceService", "method charge", "lambda <lambda1>", "lambda <lambda1>")
    # ids come from the position: line offset from the enclosing definition's line, and the column
    assert outer.id == "shop/webhooks/invoices.py::InvoiceService.charge.<lambda@1:17>"
    assert inner.id == "shop/webhooks/invoices.py::InvoiceService.charge.<lambda@1:17>.<lambda@0:51>"
    assert lambdas[f"{mod}.<lambda2>"].id == "shop/webhooks/invoices.py::<lambda@25:11>"  # module: the line
    assert len({s.id for s in ex.symbols}) == len(ex.symbols)


def test_calls_inside_a_lambda_are_its_own_and_comprehensions_stay_with_the_function():
    ex = extract_source("shop/webhooks/invoices.py", WEBHOOKS)
    ids = {s.qualname.rsplit("invoices.", 1)[-1]: s.id.split("::", 1)[1] for s in ex.symbols}
    assert calls_of(ex, ids["<lambda1>"]) == {("log_failure", "call")}
    assert calls_of(ex, ids["invoice_paid.<lambda1>"]) == {("mark_paid", "call")}
    assert calls_of(ex, ids["InvoiceService.charge.<lambda1>"]) == {("self.mailer.send", "call")}
    assert calls_of(ex, ids["InvoiceService.charge.<lambda1>.<lambda1>"]) == {("render_receipt", "call")}
    body = calls_of(ex, "invoice_paid")
    assert {("sorted", "call"), ("sum", "call"), ("is_billable", "call"), ("handlers[]", "value")} <= body
    assert ("mark_paid", "call") not in body and ("log_failure", "call") not in body


def test_a_lambda_run_at_once_is_called_by_its_scope():
    """`sorted(..., key=lambda ...)` (a builtin that calls what it is given) and `(lambda: ...)()` run the
    lambda; a lambda stored in a dict or bound to a name is not called by being written."""
    ex = extract_source("shop/webhooks/invoices.py", WEBHOOKS)
    assert ("<lambda2>", "callback") in calls_of(ex, "invoice_paid")  # the sort key
    assert ("<lambda1>", "callback") not in calls_of(ex, "invoice_paid")  # the handler table's lambda
    assert not any(callee.startswith("<lambda") for callee, _ in calls_of(ex, "<module>"))
    source = (
        '"""Exchange rates."""\n\n\ndef load_rates(fetch):\n    return fetch()\n\n\n'
        "RATES = (lambda: load_rates(download))()\n"
        "eur = sorted(RATES, key=(lambda pair: pair[1]))\n"
    )
    rates = extract_source("shop/billing/rates.py", source)
    module = {(c.callee, c.via) for c in rates.calls if c.caller_id == "shop/billing/rates.py::<module>"}
    assert module == {("<lambda1>", "call"), ("<lambda2>", "callback"), ("sorted", "call")}
    resolver = Resolver([rates])
    calls = {(e.src, e.dst) for e in resolver.edges(rates)[0] if e.type == "CALLS"}
    first, second = (s.id for s in rates.symbols if s.kind == "lambda")
    assert {("shop/billing/rates.py::<module>", first), ("shop/billing/rates.py::<module>", second)} <= calls
    assert (first, "shop/billing/rates.py::load_rates") in calls
    assert not any(dst == "<lambda>" for _, dst in calls)  # no unresolved value call beside it


def test_only_the_function_slot_of_a_higher_order_builtin_is_a_callback():
    """`max(delay, 0.0)` calls nothing it is given; `sorted(invoices, key=invoice_total)` calls the key
    only; `map(normalize_sku, rows)` the function, not the rows."""
    source = (
        '"""Invoice totals."""\nimport functools\n\n\n'
        "def summarize(invoices, rows, delay, invoice_total, normalize_sku):\n"
        "    wait = max(delay, 0.0)\n"
        "    ordered = sorted(invoices, key=invoice_total)\n"
        "    skus = list(map(normalize_sku, rows))\n"
        "    total = functools.reduce(add_cents, invoices, 0)\n"
        "    return wait, ordered, skus, total\n"
    )
    ex = extract_source("shop/billing/totals.py", source)
    callbacks = {c.callee for c in ex.calls if c.via == "callback"}
    assert callbacks == {"invoice_total", "normalize_sku", "add_cents"}


def test_where_a_lambda_goes_is_recorded():
    ex = extract_source("shop/webhooks/invoices.py", WEBHOOKS)
    values = {(v.target, v.slot): v for v in ex.callable_values}
    assert values[("sort_key", "")].scope_id == "shop/webhooks/invoices.py::<module>"
    assert values[("sorted", "key")].symbol_id == "shop/webhooks/invoices.py::invoice_paid.<lambda@3:41>"
    assert values[("notify", "")].scope_id == "shop/webhooks/invoices.py::InvoiceService.charge"
    assert values[("self.mailer.send", "1")] == CallableValue(
        "shop/webhooks/invoices.py::InvoiceService.charge.<lambda@1:17>.<lambda@0:51>",
        "shop/webhooks/invoices.py::InvoiceService.charge.<lambda@1:17>",
        "self.mailer.send",
        "1",
        19,
    )
    assert values[("by_total", "")].scope_id == "shop/webhooks/invoices.py::InvoiceService"


def test_an_edit_elsewhere_does_not_rename_a_lambda():
    before = extract_source("shop/webhooks/invoices.py", WEBHOOKS)
    edited = WEBHOOKS.replace(
        "class InvoiceService:",
        "def refund(invoice):\n    return issue_refund(invoice, reason=lambda: 'duplicate')\n\n\nclass InvoiceService:",
    )
    after = extract_source("shop/webhooks/invoices.py", edited)
    inside = [s.id for s in before.symbols if s.kind == "lambda" and "InvoiceService" in s.id]
    assert inside and set(inside) <= {s.id for s in after.symbols}


def test_lambdas_are_graph_nodes_but_not_retrieval_units():
    ex = extract_source("shop/webhooks/invoices.py", WEBHOOKS)
    unit = chunk_file(ex)
    lambdas = [s for s in unit.symbols if s.kind == "lambda"]
    assert len(lambdas) == 7 and all(not s.retrievable and s.search_text == "" for s in lambdas)
    assert len(unit.embed_texts) == len(unit.symbols) - 7
    toc = next(c for c in unit.chunks if c.kind == "toc")
    assert "lambda" not in toc.text


def _definitions(ex) -> set[str]:
    return {s.qualname for s in ex.symbols if s.kind != "lambda"}


def test_the_walker_survives_trees_deeper_than_the_recursion_limit():
    """5,000 nested parentheses, a 1,000-term string concatenation, a 500-link call chain and 600
    nested ifs raise no RecursionError: every definition around them is still extracted, with its calls."""
    deep = {
        "parens": "    factor = " + "(" * 5000 + "amount_cents" + ")" * 5000 + "\n",
        "concat": "    message = " + " + ".join(f'"line {i} "' for i in range(1000)) + "\n",
        "chain": "    receipt = gateway" + ".then(record_attempt)" * 500 + "\n",
        "ifs": "".join("    " + "    " * i + f"if attempt > {i}:\n" for i in range(600))
        + "    " * 601
        + "escalate(invoice)\n",
    }
    for name, body in deep.items():
        source = (
            f'"""Invoice reminders ({name})."""\n\n\n'
            "def before(invoice):\n    return send_reminder(invoice)\n\n\n"
            f"def pathological(invoice, amount_cents, attempt, gateway):\n{body}\n\n"
            "class ReminderQueue:\n    def after(self, invoice):\n        return send_reminder(invoice)\n"
        )
        ex = extract_source("shop/billing/reminders.py", source)
        mod = "shop.billing.reminders"
        expected = {mod, f"{mod}.before", f"{mod}.pathological", f"{mod}.ReminderQueue", f"{mod}.ReminderQueue.after"}
        if name == "ifs":  # tree-sitter-python's scanner keeps 510 indentation levels: the def itself is lost
            expected.discard(f"{mod}.pathological")
            assert ex.warnings and ex.warnings[0].startswith("syntax error near line")
        else:
            assert not ex.warnings, name
        assert _definitions(ex) == expected, name
        reminders = {(c.caller_id.split("::")[1], c.callee) for c in ex.calls}
        assert ("ReminderQueue.after", "send_reminder") in reminders and ("before", "send_reminder") in reminders
        if name == "chain":
            chain = [c for c in ex.calls if c.caller_id.endswith("::pathological") and c.callee.endswith(".then")]
            assert len(chain) == 500
            assert max(chain, key=lambda c: len(c.callee)).callee == "gateway" + ".then()" * 499 + ".then"
        if name == "parens":
            assert ("pathological", "amount_cents") not in reminders  # a value, not a call


STATEMENT_LINES = """
def first_two(statement):
    head, second = statement.tokens[0], statement.tokens[1]
    return head if "SELECT" in statement else second


def last(statement):
    return statement.tokens[-1]
"""


def test_an_operand_is_asked_once_per_definition_and_dunder():
    """`statement.tokens[0]` and `statement.tokens[1]` in one function can only give one edge (the same
    __getitem__), so they make one operator site; another function, or another dunder, makes its own."""
    ex = extract_source("shop/sql/statements.py", STATEMENT_LINES)
    sites = [(c.caller_id.split("::")[1], c.callee, c.protocol) for c in ex.calls if c.via == "operator"]
    assert sites == [
        ("first_two", "statement.tokens", "__getitem__"),
        ("first_two", "statement", "__contains__"),
        ("last", "statement.tokens", "__getitem__"),
    ]


def test_a_higher_order_function_imported_by_name_is_known_by_its_module():
    """`from itertools import takewhile` then `takewhile(all_paid, ...)` calls `all_paid`, as
    `itertools.takewhile(...)` does; a repository function that happens to be named `takewhile` does not."""
    source = (
        '"""Settlement runs."""\nfrom functools import reduce as fold\nfrom itertools import takewhile\n'
        "import itertools as it\n\n\n"
        "def settled_prefix(batches, all_paid, add_cents, by_day):\n"
        "    head = list(takewhile(all_paid, batches))\n"
        "    total = fold(add_cents, head, 0)\n"
        "    return total, it.groupby(head, key=by_day)\n"
    )
    ex = extract_source("shop/billing/settlement.py", source)
    assert {c.callee for c in ex.calls if c.via == "callback"} == {"all_paid", "add_cents", "by_day"}
    own = (
        '"""Own helpers."""\n\n\ndef takewhile(limit, batches):\n    return batches[:limit]\n\n\n'
        "def first(batches, limit):\n    return takewhile(limit, batches)\n"
    )
    mine = extract_source("shop/billing/prefix.py", own)
    assert not [c for c in mine.calls if c.via == "callback"]


def test_jedi_is_asked_about_calls_before_operands():
    """jedi caches a parameter's values per file, cut short when the search starts inside another
    inference: operands (truth tests, operators) are asked after every call, so they cannot cut what a
    call through a parameter finds (sqlparse's `_group` lost 10 of its `post` functions that way)."""
    from cg.ingest.resolve.jedi_resolver import positions_of

    source = (
        '"""Grouping."""\n\n\ndef group(tokens, post, valid_next, batch):\n'
        "    if batch and valid_next(tokens):\n        return post(tokens)\n    return len(batch)\n"
    )
    ex = extract_source("shop/sql/grouping.py", source)
    asked = positions_of(ex, frozenset({"__bool__", "__len__"}))
    operands = {(c.line, c.column) for c in ex.calls if c.via == "operator"}
    kinds = ["operand" if (line, column) in operands else "call" for line, column, _ in asked]
    assert kinds == sorted(kinds)  # every call ("call") before every operand ("operand")
    assert kinds.count("operand") == 2  # `if batch` and `len(batch)`; `valid_next(tokens)` is a call's value


CERTAIN = '''"""Invoice exports."""
import csv as table
from shop.billing.totals import invoice_total
from shop.billing import rates


def render(invoice):
    return str(invoice_total(invoice))


def export(invoices, path):
    rows = [render(i) for i in invoices]
    for row in rows:
        table.writer(path).writerow(row)
        print(len(row), invoice_total(row), table.writer(path))
    rates.refresh()
    return sorted(rows, key=len), rates.refresh()


def reprice(invoices, rates_by_day):
    render = rates_by_day.get
    return [render(i) for i in invoices]
'''


def test_names_bound_once_at_module_level_are_certain_and_jedi_is_asked_once_per_expression():
    """A name whose only binding in the file is one module-level def, class or import (or a builtin the
    file never binds) means the same thing at every call: jedi is asked at its first call and the answer
    stands for the others. Passed as a value, rebound, or shadowed anywhere in the file, it is not."""
    from cg.ingest.resolve.jedi_resolver import positions_of, shared_sites

    ex = extract_source("shop/billing/export.py", CERTAIN)
    assert {"table", "invoice_total", "rates", "str", "print"} <= ex.certain_names
    assert "len" not in ex.certain_names  # handed to sorted() as a key
    assert "render" not in ex.certain_names  # a local of reprice shadows the module's render
    shared = shared_sites(ex)
    by_position = {(c.line, c.column): c.callee for c in ex.calls}
    repeated = sorted(by_position[p] for p in shared)
    assert repeated == ["invoice_total", "rates.refresh", "table.writer"]
    asked = {(line, column) for line, column, _ in positions_of(ex, frozenset())}
    assert not asked & set(shared) and set(shared.values()) <= asked
    assert all(by_position[first] == by_position[repeat] for repeat, first in shared.items())


def test_loops_over_builtins_and_repositories_without_the_dunder_ask_jedi_nothing():
    """`for` is asked only where some repository class defines `__iter__` or `__next__`, and never over
    a certain builtin's own object (`enumerate(rows)`, `len(rows) + 1`); an `iter()` of it still is."""
    from cg.ingest.resolve.jedi_resolver import positions_of

    source = (
        '"""Ledger rows."""\n\n\ndef post(ledger, rows):\n'
        "    for index, row in enumerate(rows):\n        ledger.add(index, row)\n"
        "    for entry in ledger:\n        entry.close()\n"
        "    for entry in iter(ledger):\n        entry.close()\n"
        "    return len(rows) + 1\n"
    )
    ex = extract_source("shop/billing/ledger.py", source)
    protocol = {(c.line, c.column): c.callee for c in ex.calls if c.via in ("iter", "operator")}

    def asked(names):
        positions = [(line, column) for line, column, _ in positions_of(ex, names)]
        return sorted(protocol[p] for p in positions if p in protocol)

    assert asked(frozenset()) == []
    assert asked(frozenset({"__iter__", "__add__"})) == ["iter()", "ledger", "ledger"]  # iter() of ledger; its argument
