"""The dynamic benchmark's own rules (benchmarks/tracer.py, benchmarks/executed_edges.py): the tracer
names edges by `cg callgraph`'s conventions, the miss classifier reads call sites right, and the
precision audit never counts an edge nobody reviewed."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
tracer = importlib.import_module("tracer")
executed_edges = importlib.import_module("executed_edges")

BILLING = textwrap.dedent(
    """\
    def audited(fn):
        def wrapper(*args):
            return fn(*args)
        return wrapper


    def tagged(label):
        def apply(fn):
            return fn
        return apply


    @audited
    def charge_invoice(lines):
        ordered = sorted(lines, key=lambda line: line_fee(line))
        retry = lambda: [line_fee(x) for x in ordered]
        return retry(), (lambda: (lambda: line_fee(1))())()


    def line_fee(amount):
        return amount


    class Coupon:
        rate = (lambda: line_fee(2))()

        @tagged("webhook")
        def redeem(self):
            return list(line_fee(i) for i in range(2))


    def settle():
        charge_invoice([3, 1])
        Coupon().redeem()
    """
)


@pytest.fixture
def billing(tmp_path: Path):
    """A package ``shopbilling`` on the path, imported fresh under the tracer's profile hook."""
    package = tmp_path / "shopbilling"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "payments.py").write_text(BILLING)
    sys.path.insert(0, str(tmp_path))
    recorder = tracer.Recorder(tmp_path.resolve(), "shopbilling")
    try:
        sys.setprofile(recorder.profile)
        module = importlib.import_module("shopbilling.payments")
        module.settle()
    finally:
        sys.setprofile(None)
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.startswith("shopbilling")]:
            del sys.modules[name]
    return recorder


def test_tracer_names_edges_by_the_callgraph_conventions(billing) -> None:
    p = "shopbilling.payments"
    edges = set(billing.edges)
    # decorators are called by the scope that defines the decorated function
    assert (p, f"{p}.audited") in edges
    assert (f"{p}.Coupon", f"{p}.tagged") in edges and (f"{p}.Coupon", f"{p}.tagged.apply") in edges
    assert not any(callee.endswith(".audited") for caller, callee in edges if caller != p)
    # calling the decorated name reaches the wrapper, which calls the original
    assert (f"{p}.settle", f"{p}.audited.wrapper") in edges
    assert (f"{p}.audited.wrapper", f"{p}.charge_invoice") in edges
    # lambdas are definitions named per enclosing scope, in source order; their calls are theirs
    assert (f"{p}.charge_invoice", f"{p}.charge_invoice.<lambda1>") in edges  # sorted's key: the builtin is invisible
    assert (f"{p}.charge_invoice.<lambda1>", f"{p}.line_fee") in edges
    assert (f"{p}.charge_invoice.<lambda2>", f"{p}.line_fee") in edges  # through its list comprehension
    assert (f"{p}.charge_invoice.<lambda3>", f"{p}.charge_invoice.<lambda3>.<lambda1>") in edges
    assert (f"{p}.charge_invoice.<lambda3>.<lambda1>", f"{p}.line_fee") in edges
    assert (f"{p}.Coupon", f"{p}.Coupon.<lambda1>") in edges
    assert (f"{p}.charge_invoice", f"{p}.line_fee") not in edges
    # a generator expression belongs to the function around it
    assert (f"{p}.Coupon.redeem", f"{p}.line_fee") in edges
    assert billing.comprehension_starts >= 2
    # the earlier convention folds lambdas into their scope and drops calls into them
    assert (f"{p}.charge_invoice", f"{p}.line_fee") in billing.legacy
    assert not any("<lambda" in a or "<lambda" in b for a, b in billing.legacy)
    # each edge keeps the caller's line
    assert billing.edges[(f"{p}.settle", f"{p}.Coupon.redeem")] == {34}


STATEMENTS = textwrap.dedent(
    """\
    def invoice_lines(invoice):
        for line in invoice:
            yield price(line)


    def price(line):
        return line * 2


    def total(invoice):
        lines = invoice_lines(invoice)
        return sum_lines(lines)


    def sum_lines(lines):
        return sum(x for x in lines)
    """
)

RUN_TRACED = textwrap.dedent(
    """\
    import importlib, json, os, sys
    sys.path[:0] = [os.environ["CG_TRACE_ROOT"], os.environ["BENCHMARKS"]]
    import tracer
    tracer.pytest_configure(None)
    importlib.import_module("shopstatements.billing").total([1, 2])
    tracer.pytest_unconfigure(None)
    """
)


def test_a_generator_is_called_where_its_function_is_called_not_where_it_runs(tmp_path: Path) -> None:
    """On 3.12+ the tracer takes a generator's edge from the CALL event at `invoice_lines(invoice)` in
    `total`; its body runs in `sum_lines`, which is kept as a resumption, not an edge (rule 7)."""
    python = executed_edges.newer_python(None)
    if python is None:
        pytest.skip("no Python 3.12+ (sys.monitoring) on this machine")
    package = tmp_path / "shopstatements"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "billing.py").write_text(STATEMENTS)
    out = tmp_path / "edges.json"
    env = {
        "CG_TRACE_ROOT": str(tmp_path.resolve()),
        "CG_TRACE_PACKAGE": "shopstatements",
        "CG_TRACE_OUT": str(out),
        "BENCHMARKS": str(BENCHMARKS),
        "PATH": os.environ.get("PATH", ""),
    }
    subprocess.run([python, "-c", RUN_TRACED], env=env, check=True, capture_output=True, text=True)
    data = json.loads(out.read_text())
    p = "shopstatements.billing"
    edges = {(a, b) for a, b, _ in data["edges"]}
    assert data["tracer"] == "sys.monitoring" and data["generators"] == "called"
    assert (f"{p}.total", f"{p}.invoice_lines") in edges
    assert (f"{p}.sum_lines", f"{p}.invoice_lines") not in edges
    assert [f"{p}.sum_lines", f"{p}.invoice_lines"] in data["resumed"]
    assert (f"{p}.invoice_lines", f"{p}.price") in edges  # the generator's own calls are its own
    assert (f"{p}.total", f"{p}.sum_lines") in edges
    assert data["lazy"] == [f"{p}.invoice_lines"]  # the generator expression is no definition


def test_lambda_spans_pick_the_innermost_body() -> None:
    lambdas = tracer._Lambdas("shop.coupons", "apply = lambda code: (lambda: code.upper())()\n")
    names = [name for _, _, name in lambdas.spans]
    assert names == ["shop.coupons.<lambda1>", "shop.coupons.<lambda1>.<lambda1>"]
    outer_body = lambdas.spans[0][:2]
    inner_body = lambdas.spans[1][:2]
    assert lambdas.innermost(*outer_body) == "shop.coupons.<lambda1>"
    assert lambdas.innermost(*inner_body) == "shop.coupons.<lambda1>.<lambda1>"


WEBHOOKS = textwrap.dedent(
    """\
    def dispatch(event, handler, registry):
        event.deliver()
        handler(event)
        registry[event.kind](event)
        for chunk in stream_payloads(event):
            pass


    def stream_payloads(event):
        yield event


    def retry(fn):
        return fn


    @retry
    def refund(payment: object):
        payment.reverse()


    def logged(fn):
        def wrapper(*args):
            return fn(*args)
        return wrapper
    """
)


def test_misses_are_classified_by_the_call_site(tmp_path: Path) -> None:
    package = tmp_path / "shophooks"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "webhooks.py").write_text(WEBHOOKS)
    sources = executed_edges.Sources(tmp_path)
    m = "shophooks.webhooks"

    def kind(caller: str, callee: str, line: int) -> str:
        return executed_edges.classify((caller, callee), {line}, sources, set())

    assert kind(f"{m}.dispatch", "shophooks.models.Event.deliver", 2) == "method on an untyped parameter"
    assert kind(f"{m}.dispatch", f"{m}.refund", 3) == "function passed as argument (called through a parameter)"
    assert kind(f"{m}.dispatch", f"{m}.refund", 4) == "call through a container item (dict, list)"
    assert kind(f"{m}", f"{m}.retry", 17) == "decorator (applied by the defining scope)"
    assert kind(f"{m}.refund", "shophooks.models.Payment.reverse", 19) == "method on an annotated parameter"
    assert kind(f"{m}.dispatch", "shophooks.models.Event.__iter__", 5) == "iteration (__iter__/__next__)"
    assert kind(f"{m}.logged.wrapper", f"{m}.refund", 24) == (
        "closure calling an enclosing function's parameter (a wrapper calling the original)"
    )
    # cg's own graph tells when it picked another definition of the same name (the base, not the override)
    resolved = {f"{m}.dispatch": {"shophooks.models.Event.deliver"}}
    assert executed_edges.classify(
        (f"{m}.dispatch", "shophooks.models.RefundEvent.deliver"), {2}, sources, set(), resolved
    ) == ("cg chose another definition of that name (the override or sibling that ran is missing)")
    # a generator's code starts where it is iterated: the frame that resumes it, at a line without its call
    assert kind(f"{m}.dispatch", f"{m}.stream_payloads", 6) == (
        "generator started where it is iterated, not where it is called"
    )


def test_audit_counts_only_reviewed_edges(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(executed_edges, "AUDIT", tmp_path / "audit")
    monkeypatch.setattr(executed_edges, "DATA", tmp_path / "data")
    package = tmp_path / "src" / "shoppay"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("def charge():\n    capture()\n\n\ndef capture():\n    pass\n")
    edges = {(f"shoppay.step{i}", f"shoppay.step{i + 1}"): {2} for i in range(150)}
    graph = executed_edges.CgRun(edges, 1.0, 100, 0.0, 0.0, {})
    project = executed_edges.Project("shoppay", "1.0", "payments", "shoppay", "src", "tests")
    sample = sorted(edges, key=executed_edges.audit_rank)[: executed_edges.AUDIT_SIZE]
    (tmp_path / "audit").mkdir()
    rows = ["caller\tcallee\tline\tverdict\treason"]
    rows += [f"{a}\t{b}\t2\tcorrect\tdirect call" for a, b in sample[:3]]
    rows += [
        f"{sample[3][0]}\t{sample[3][1]}\t2\twrong\tnever called",
        f"{sample[4][0]}\t{sample[4][1]}\t2\tunclear\t?",
    ]
    rows += ["shoppay.gone\tshoppay.elsewhere\t2\tcorrect\tan edge the resolver no longer makes"]
    (tmp_path / "audit" / "shoppay.tsv").write_text("\n".join(rows) + "\n")

    result = executed_edges.audit(project, tmp_path, graph, executed_edges.Sources(tmp_path / "src"))

    assert result["sample"] == 100
    assert (result["correct"], result["wrong"], result["unclear"]) == (3, 1, 1)
    assert len(result["pending"]) == 95  # unreviewed: listed, counted neither way
    assert result["precision"] == pytest.approx(0.75)
    pending = (tmp_path / "data" / "audit-pending" / "shoppay.tsv").read_text().splitlines()
    assert len(pending) == 96
    # the sample is a hash rank: a resolver change keeps the sampled edges it does not touch
    fewer = {e: v for e, v in edges.items() if e != sample[0]}
    resampled = sorted(fewer, key=executed_edges.audit_rank)[:100]
    assert set(sample[1:]) <= set(resampled)


def test_audit_rejects_an_unknown_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(executed_edges, "AUDIT", tmp_path)
    (tmp_path / "shoppay.tsv").write_text("caller\tcallee\tline\tverdict\treason\nshoppay.a\tshoppay.b\t1\tfine\tok\n")
    project = executed_edges.Project("shoppay", "1.0", "payments", "shoppay", "", "tests")
    with pytest.raises(SystemExit, match="unknown verdict 'fine'"):
        executed_edges.load_verdicts(project)


def test_a_lambda_whose_code_has_no_positions_is_named_by_its_line() -> None:
    # on 3.12 `lambda value: True` is one RETURN_CONST at (line, line, 0, 0): no span places it, and the
    # tracer used to name it after the method around it (`Bucket.__init__`), an edge cg could never have
    source = textwrap.dedent(
        """\
        class Bucket:
            def __init__(self, validator=None):
                self._validator = validator or (lambda value: True)
                self._key = (lambda item: item[0], lambda item: None)
        """
    )
    lambdas = tracer._Lambdas("shopbilling.buckets", source)
    assert lambdas.without_positions(3) == "shopbilling.buckets.Bucket.__init__.<lambda1>"
    assert lambdas.without_positions(4) == "shopbilling.buckets.Bucket.__init__.<lambda3>"  # the constant one
    assert lambdas.without_positions(2) is None
    namespace: dict = {}
    exec(compile(source, "buckets.py", "exec"), namespace)  # noqa: S102 - our own fixture source
    code = namespace["Bucket"]().__dict__["_validator"].__code__
    recorder = tracer.Recorder(Path("."), "shopbilling")
    recorder.lambdas["buckets.py"] = lambdas
    assert recorder._lambda_name(code, "shopbilling.buckets") == "shopbilling.buckets.Bucket.__init__.<lambda1>"
