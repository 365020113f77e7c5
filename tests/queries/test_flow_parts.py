"""The pure parts of flow assembly: entry-point kinds, decorators, hub penalty, body trimming."""

from __future__ import annotations

from cg.queries.explain import _entry_kind, decorators, hub_penalty, trim_body

FN = "shop.api.handlers.pay"


def node(qualname: str = FN, name: str = "pay", path: str = "shop/api/handlers.py", kind: str = "function") -> dict:
    return {"qualname": qualname, "name": name, "path": path, "kind": kind, "text": ""}


def test_decorators_are_read_above_the_definition_only():
    text = '@router.route("/pay", methods=["POST"])\n@login_required\ndef pay(request):\n'
    text += "    @cache\n    def inner(): ...\n"
    assert decorators(text) == ['router.route("/pay", methods=["POST"])', "login_required"]
    assert decorators("def plain():\n    pass\n") == []


def test_entry_kinds_in_rank_order():
    assert _entry_kind(node(), ['router.route("/pay")'], 0) == "route"
    assert _entry_kind(node(), ["app.post('/pay')"], 0) == "route"
    assert _entry_kind(node(), ["click.command()"], 0) == "cli"
    assert _entry_kind(node(), ["cli.command(name='pay')"], 0) == "cli"
    assert _entry_kind(node("shop.cli.main", "main"), [], 0) == "main"
    assert _entry_kind(node(), [], 0) == "public"
    assert _entry_kind(node("shop.api._helpers.pay"), [], 0) == "uncalled"
    assert _entry_kind(node(), [], 2) == "partial"  # called from beyond the walked depth
    test = node("tests.test_pay.test_pay", "test_pay", "tests/test_pay.py")
    assert _entry_kind(test, [], 0) == "test"
    assert _entry_kind(node(), ["property"], 0) == "public"  # not every decorator is an entry point


def test_hub_penalty_spares_ordinary_callees_and_grows_slowly():
    assert [hub_penalty(n) for n in (0, 1, 3)] == [1.0, 1.0, 1.0]
    values = [hub_penalty(n) for n in (4, 8, 40, 400)]
    assert values == sorted(values) and values[0] == 2.0
    assert hub_penalty(400) < 10  # a hub is demoted, not erased


def test_trim_body_keeps_signature_and_docstring():
    text = 'def f(\n    a,\n) -> int:\n    """Doc line.\n\n    More doc.\n    """\n    total = sum(line.amount_cents for line in lines)\n    return total - discount\n'
    trimmed = trim_body(text, {"docstring": "Doc line.\n\nMore doc."})
    assert trimmed.splitlines()[:7] == text.splitlines()[:7]
    assert trimmed.splitlines()[-1] == "    ...  # 2 more lines (trimmed by the token budget)"
    one = "def g():\n    return 1\n"
    assert trim_body(one, {"docstring": ""}) == one, "a cut that saves nothing is not made"
    long_line = "def g(invoice):\n    return invoice.total_cents - invoice.refunded_cents - invoice.discount_cents\n"
    assert trim_body(long_line, {}).endswith("...  # 1 more line (trimmed by the token budget)")
