"""No run ever aborts on one file: pathological code (nested thousands deep, chains hundreds long,
type references that loop) inside a normal repository is indexed, or falls back and is named in the
summary, while every other file of the repository is indexed and its calls resolved.

The cyclic type references are the shapes that stopped real projects: spf13/cobra v1.8.1 (a local
``flag`` shadowing the ``flag`` package its parameter's type names) and the semver 1.0.23 crate
(``let text = text.trim_start_matches(' ')``)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import msgspec
import pytest

from cg.config import load_settings
from cg.embed import embedder_for
from cg.graph.kuzu_store import KuzuStore
from cg.ingest.languages.javascript import JavaScriptExtractor
from cg.ingest.pipeline import (
    RESOLVE_BY_NAME,
    RESOLVE_NOTHING,
    IndexSummary,
    extract_repository,
    index_repository,
    resolve_files,
)
from cg.ingest.resolve.generic import GenericResolver
from cg.ingest.resolve.python import Resolver
from cg.model import FileExtraction
from tests.conftest import cg_command
from tests.ingest.helpers import PAYMENTS

# A small polyglot shop: each file makes one call into another file that must resolve.
SHOP_FILES = {
    "billing/payments.py": PAYMENTS,
    "billing/invoices.py": (
        "from billing.payments import charge_card\n\n\ndef settle_invoice(cents: int) -> bool:\n"
        "    return charge_card(cents)\n"
    ),
    "gateway/go.mod": "module example.com/shop/gateway\n\ngo 1.21\n",
    "gateway/fees.go": (
        "package gateway\n\n// Fee is the card network's cut.\nfunc Fee(cents int) int {\n\treturn cents / 50\n}\n"
    ),
    "gateway/refunds.go": "package gateway\n\nfunc Refund(cents int) int {\n\treturn cents - Fee(cents)\n}\n",
    "gateway/coupon/book.go": (
        "package coupon\n\ntype Coupon struct{ Percent int }\n\ntype Book struct{ codes map[string]*Coupon }\n\n"
        "func (b *Book) Lookup(code string) *Coupon {\n\treturn b.codes[code]\n}\n"
    ),
    "web/coupons.js": "export function applyCoupon(total) {\n  return total * 0.9;\n}\n",
    "web/checkout.js": (
        'import { applyCoupon } from "./coupons.js";\n\nexport function checkout(total) {\n'
        "  return applyCoupon(total);\n}\n"
    ),
    "ledger/Cargo.toml": '[package]\nname = "ledger"\nversion = "0.1.0"\nedition = "2021"\n',
    "ledger/src/lib.rs": "mod invoice;\n\npub fn total(lines: &[u64]) -> u64 {\n    invoice::sum(lines)\n}\n",
    "ledger/src/invoice.rs": "pub fn sum(lines: &[u64]) -> u64 {\n    lines.iter().sum()\n}\n",
}
# (caller, callee) ids every run must resolve, whatever else the repository holds.
SHOP_CALLS = {
    ("billing/invoices.py::settle_invoice", "billing/payments.py::charge_card"),
    ("billing/payments.py::retry_charge", "billing/payments.py::charge_card"),
    ("gateway/refunds.go::Refund", "gateway/fees.go::Fee"),
    ("web/checkout.js::checkout", "web/coupons.js::applyCoupon"),
    ("ledger/src/lib.rs::total", "ledger/src/invoice.rs::sum"),
}
SHOP_DEFINITIONS = {"charge_card", "retry_charge", "settle_invoice", "Fee", "Refund", "applyCoupon", "checkout", "sum"}


@dataclass(frozen=True)
class Case:
    """One pathological file, the definitions it holds and the in-repo calls it makes."""

    path: str
    source: str
    definitions: frozenset[str]
    calls: frozenset[tuple[str, str]]
    python: bool = False  # the Python extractor is made depth-safe apart: fully indexed or named as fallen back
    parser_limit: bool = False  # beyond the grammar's own limit (tree-sitter-python stops at 510 indent levels)


CASES = {
    "javascript: a 500-link .then() chain": Case(
        "web/retries.js",
        'import { applyCoupon } from "./coupons.js";\n\nexport function retryPayment(fetchPayment) {\n'
        "  return fetchPayment()\n"
        + "    .then((payment) => payment)\n" * 500
        + "    .then((payment) => applyCoupon(payment));\n}\n",
        frozenset({"retryPayment"}),
        frozenset({("web/retries.js::retryPayment", "web/coupons.js::applyCoupon")}),
    ),
    "python: a 1,000-term string concatenation": Case(
        "billing/receipts.py",
        "from billing.payments import charge_card\n\n\ndef receipt_label(cents: int) -> str:\n"
        "    charge_card(cents)\n    return " + " + ".join(f'"line {n} "' for n in range(1000)) + "\n",
        frozenset({"receipt_label"}),
        frozenset({("billing/receipts.py::receipt_label", "billing/payments.py::charge_card")}),
        python=True,
    ),
    "python: 5,000 nested parentheses": Case(
        "billing/rates.py",
        "from billing.payments import charge_card\n\n\ndef surcharge(cents: int) -> int:\n"
        "    return " + "(" * 5000 + "charge_card(cents)" + ")" * 5000 + "\n",
        frozenset({"surcharge"}),
        frozenset({("billing/rates.py::surcharge", "billing/payments.py::charge_card")}),
        python=True,
    ),
    "typescript: 5,000 nested parentheses": Case(
        "web/totals.ts",
        'import { applyCoupon } from "./coupons.js";\n\nexport function orderTotal(cents: number): number {\n'
        "  return " + "(" * 5000 + "applyCoupon(cents)" + ")" * 5000 + ";\n}\n",
        frozenset({"orderTotal"}),
        frozenset({("web/totals.ts::orderTotal", "web/coupons.js::applyCoupon")}),
    ),
    "python: 600 nested ifs": Case(
        "billing/fraud.py",
        "from billing.payments import charge_card\n\n\ndef screen_payment(cents: int) -> bool:\n"
        + "".join(" " * (level + 1) + f"if cents > {level}:\n" for level in range(600))
        + " " * 601
        + "return charge_card(cents)\n return False\n",
        frozenset({"screen_payment"}),
        frozenset({("billing/fraud.py::screen_payment", "billing/payments.py::charge_card")}),
        python=True,
        parser_limit=True,
    ),
    "go: 600 nested ifs": Case(
        "gateway/fraud.go",
        "package gateway\n\nfunc Screen(cents int) int {\n"
        + "".join(f"if cents > {level} {{\n" for level in range(600))
        + "return Fee(cents)\n"
        + "}\n" * 600
        + "\treturn 0\n}\n",
        frozenset({"Screen"}),
        frozenset({("gateway/fraud.go::Screen", "gateway/fees.go::Fee")}),
    ),
    "go: a local shadowing the package its parameter's type names (cobra v1.8.1)": Case(
        "gateway/coupons.go",
        'package gateway\n\nimport coupon "example.com/shop/gateway/coupon"\n\n'
        "func CouponApplies(code string, book *coupon.Book) bool {\n\tcoupon := book.Lookup(code)\n"
        "\treturn coupon != nil && coupon.Percent > 0 && Fee(100) > 0\n}\n",
        frozenset({"CouponApplies"}),
        frozenset(
            {
                ("gateway/coupons.go::CouponApplies", "gateway/coupon/book.go::Book.Lookup"),
                ("gateway/coupons.go::CouponApplies", "gateway/fees.go::Fee"),
            }
        ),
    ),
    "go: a chain of 1,000 inferred types": Case(
        "gateway/steps.go",
        "package gateway\n\ntype Step struct{ cents int }\n\n"
        "func (s Step) Next() Step {\n\treturn Step{s.cents + 1}\n}\n\n"
        "func Walk(first Step) int {\n\tstep0 := first.Next()\n"
        + "".join(f"\tstep{n} := step{n - 1}.Next()\n" for n in range(1, 1000))
        + "\treturn Fee(step999.cents)\n}\n",
        frozenset({"Walk", "Next"}),
        frozenset(
            {
                ("gateway/steps.go::Walk", "gateway/fees.go::Fee"),
                ("gateway/steps.go::Walk", "gateway/steps.go::Step.Next"),
            }
        ),
    ),
    "rust: bindings whose types refer to each other (semver 1.0.23)": Case(
        "ledger/src/parse.rs",
        "use crate::invoice;\n\npub fn parse_amount(text: &str) -> u64 {\n"
        "    let text = text.trim_start_matches(' ');\n"
        "    let (code, rest) = split_code(text);\n"
        "    let amount = code.parse_amount(rest);\n"
        "    let code = amount.normalize();\n"
        "    invoice::sum(&[code.cents()])\n}\n\n"
        "fn split_code(text: &str) -> (&str, &str) {\n    text.split_at(4)\n}\n",
        frozenset({"parse_amount", "split_code"}),
        frozenset(
            {
                ("ledger/src/parse.rs::parse_amount", "ledger/src/invoice.rs::sum"),
                ("ledger/src/parse.rs::parse_amount", "ledger/src/parse.rs::split_code"),
            }
        ),
    ),
}


def _repo(root: Path, extra: dict[str, str]) -> Path:
    for rel, text in {**SHOP_FILES, **extra}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _index(repo: Path) -> tuple[IndexSummary, list[FileExtraction], set[tuple[str, str]]]:
    """Parse and resolve with the name resolver, as a run does; the summary and the in-repo calls."""
    settings = load_settings(repo, resolver="name")
    summary = IndexSummary(str(repo), "kuzu")
    extractions, _ = extract_repository(settings, summary=summary)
    resolved = resolve_files(settings, extractions, None, summary=summary)
    calls = {
        (e.src, e.dst) for r in resolved.values() for e in r.edges if e.type == "CALLS" and e.dst_label == "Symbol"
    }
    return summary, extractions, calls


def _definitions(extractions: list[FileExtraction], path: str | None = None) -> set[str]:
    return {s.name for ex in extractions if path in (None, ex.file.path) for s in ex.symbols if s.kind != "module"}


@pytest.mark.parametrize("case", CASES.values(), ids=list(CASES))
def test_a_pathological_file_never_stops_the_run_and_the_rest_is_indexed(tmp_path: Path, case: Case) -> None:
    summary, extractions, calls = _index(_repo(tmp_path / "shop", {case.path: case.source}))

    assert {ex.file.path for ex in extractions} >= {p for p in SHOP_FILES if not p.endswith((".mod", ".toml"))}
    assert case.path in {ex.file.path for ex in extractions}  # a File node, whatever happened to it
    assert SHOP_DEFINITIONS <= _definitions(extractions) and SHOP_CALLS <= calls
    named = {(f.path, f.stage) for f in summary.failed}
    if case.parser_limit:  # the parser gives up: the file is named with its syntax error, what parsed is kept
        assert summary.failed == []
        assert [w for w in summary.syntax_errors if w.startswith(f"{case.path}: syntax error near line")]
    elif case.python and (case.path, "parse") in named:  # fell back: named, without definitions
        assert [str(f) for f in summary.failed] == [
            f"{case.path}: parse: nested too deeply to analyse (RecursionError) -> indexed without definitions"
        ]
        assert _definitions(extractions, case.path) == set()
    else:  # analysed whole: its definitions and its calls
        assert summary.failed == []
        assert case.definitions <= _definitions(extractions, case.path)
        assert case.calls <= calls


def test_cyclic_types_resolve_to_what_the_source_says_not_only_terminate(tmp_path: Path) -> None:
    """cobra's shape: the parameter's type names the imported package, not the local declared after it,
    so the call on the parameter reaches the package's method; semver's shape resolves no further."""
    coupons = CASES["go: a local shadowing the package its parameter's type names (cobra v1.8.1)"]
    extractions = extract_repository(load_settings(_repo(tmp_path / "shop", {coupons.path: coupons.source})))[0]
    resolver = GenericResolver([ex for ex in extractions if ex.file.language != "python"], tmp_path / "shop")
    applies = resolver.by_id["gateway/coupons.go::CouponApplies"]
    book = resolver.type_target("coupon.Book", applies)
    assert book is not None and book.id == "gateway/coupon/book.go::Book"
    assert resolver.type_target("call:coupon.Percent", applies) is None  # the local `coupon`: no stated type
    assert resolver._open == set()  # every question it opened, it closed


def test_the_summary_names_each_fallback_with_its_stage_and_error_and_strict_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The safety net around every file: a bug of ours in an extractor (KeyError) and in the resolver
    is caught, logged with the file and the exception's type, and named with the fallback taken."""
    repo = _repo(tmp_path / "shop", {})
    parse, resolve = "web/checkout.js", "gateway/refunds.go"
    extract, edges = JavaScriptExtractor.extract, GenericResolver.edges

    def broken_extract(self, record, source):
        if record.path == parse and source:
            raise KeyError("arrow_function")
        return extract(self, record, source)

    def broken_edges(self, ex):
        if ex.file.path == resolve:
            raise AttributeError("'NoneType' object has no attribute 'kind'")
        return edges(self, ex)

    monkeypatch.setattr(JavaScriptExtractor, "extract", broken_extract)
    monkeypatch.setattr(GenericResolver, "edges", broken_edges)
    with caplog.at_level(logging.WARNING, logger="cg"):
        summary, extractions, calls = _index(repo)

    assert [(f.path, f.stage, f.error, f.fallback) for f in summary.failed] == [
        (parse, "parse", "KeyError", "indexed without definitions"),
        (resolve, "resolve", "AttributeError", RESOLVE_NOTHING),
    ]
    assert str(summary.failed[0]) == f"{parse}: parse: KeyError: 'arrow_function' -> indexed without definitions"
    assert f"{parse}: parse failed with KeyError" in caplog.text
    assert f"{resolve}: resolve failed with AttributeError" in caplog.text
    assert _definitions(extractions, parse) == set() and parse in {ex.file.path for ex in extractions}
    assert "Refund" in _definitions(extractions, resolve)  # kept; only its own edges are gone
    assert not any(src.startswith(resolve) for src, _ in calls)
    assert (
        SHOP_CALLS
        - {("web/checkout.js::checkout", "web/coupons.js::applyCoupon")}
        - {("gateway/refunds.go::Refund", "gateway/fees.go::Fee")}
        <= calls
    )
    assert summary.as_dict()["failed"][1] == {
        "path": resolve,
        "stage": "resolve",
        "error": "AttributeError",
        "reason": "AttributeError: 'NoneType' object has no attribute 'kind'",
        "fallback": RESOLVE_NOTHING,
    }


def test_a_file_jedi_answers_break_falls_back_to_the_name_resolver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resolver failure on a Python file resolved with jedi's answers: the name resolver resolves it
    instead, and the summary says so; the file's calls are still there."""
    repo = _repo(tmp_path / "shop", {})
    original = Resolver.edges

    def edges(self: Resolver, ex: FileExtraction):
        if ex.file.path == "billing/invoices.py" and self.jedi is not None:
            raise RecursionError("maximum recursion depth exceeded")
        return original(self, ex)

    monkeypatch.setattr(Resolver, "edges", edges)
    settings = load_settings(repo, resolver="jedi", jedi_workers=0)
    summary = IndexSummary(str(repo), "kuzu")
    extractions, _ = extract_repository(settings, summary=summary)
    resolved = resolve_files(settings, extractions, {"billing/invoices.py"}, summary=summary)
    assert [str(f) for f in summary.failed] == [
        f"billing/invoices.py: resolve: nested too deeply to analyse (RecursionError) -> {RESOLVE_BY_NAME}"
    ]
    calls = {(e.src, e.dst, e.resolved_by) for e in resolved["billing/invoices.py"].edges if e.type == "CALLS"}
    assert ("billing/invoices.py::settle_invoice", "billing/payments.py::charge_card", "import") in calls


def test_cg_index_completes_on_every_pathological_file_at_once(tmp_path: Path) -> None:
    """The real CLI with its defaults (jedi, the embedder, the store): one repository holding every
    case completes, reports any fallback by name in text and JSON, and answers about the rest."""
    repo = _repo(tmp_path / "shop", {case.path: case.source for case in CASES.values()})
    done = cg_command("index", str(repo), "--json")
    summary = msgspec.json.decode(done.stdout)
    fell_back = {f["path"] for f in summary["failed"]}
    assert fell_back <= {case.path for case in CASES.values() if case.python}
    assert all(f["stage"] == "parse" and f["fallback"] == "indexed without definitions" for f in summary["failed"])
    assert all(f"{path}: parse failed with RecursionError" in done.stderr for path in fell_back)
    files = msgspec.json.decode(cg_command("cypher", "MATCH (f:File) RETURN f.path AS path", "--json", cwd=repo).stdout)
    sources = {**SHOP_FILES, **{case.path: case.source for case in CASES.values()}}
    assert {row["path"] for row in files} >= {path for path in sources if not path.endswith(".mod")}

    rows = msgspec.json.decode(
        cg_command(
            "cypher",
            "MATCH (a:Symbol)-[:CALLS]->(b:Symbol) RETURN a.id AS src, b.id AS dst",
            "--json",
            cwd=repo,
        ).stdout
    )
    calls = {(row["src"], row["dst"]) for row in rows}
    expected = set(SHOP_CALLS)
    for case in CASES.values():
        if case.path not in fell_back and not case.parser_limit:
            expected |= case.calls
    limited = {case.path for case in CASES.values() if case.parser_limit}
    assert {w.split(": ")[0] for w in summary["syntax_errors"]} >= limited
    assert expected <= calls
    callers = cg_command("callers", "applyCoupon", "--json", cwd=repo).stdout
    assert "retryPayment" in callers and "orderTotal" in callers

    text = cg_command("index", str(repo), "--full").stdout
    if fell_back:
        assert f"could not be analysed, fell back: {len(fell_back)} (" in text
        strict = cg_command("index", str(repo), "--full", "--strict", check=False)
        assert strict.returncode == 1 and f"--strict: {len(fell_back)} file(s) were not fully indexed" in strict.stderr
    else:
        assert "could not be analysed" not in text


def test_hostile_project_files_beside_the_sources_never_stop_or_hang_the_resolver(tmp_path: Path) -> None:
    """go.mod and tsconfig.json are read by the resolver, not the walk: a FIFO is not waited on, JSON
    nested too deep or of the wrong shape is skipped, and imports resolve as without them."""
    import os

    repo = _repo(tmp_path / "shop", {"web/tsconfig.json": "[" * 100_000 + "]" * 100_000})
    (repo / "tsconfig.json").write_text('{"compilerOptions": {"baseUrl": 7, "paths": ["src/*"]}}')
    os.mkfifo(repo / "web" / "jsconfig.json")
    (repo / "ledger" / "go.mod").symlink_to(tmp_path / "elsewhere.mod")
    (tmp_path / "elsewhere.mod").write_text("module example.com/outside\n")
    summary, _, calls = _index(repo)
    assert summary.failed == [] and SHOP_CALLS <= calls


def test_a_file_that_fell_back_is_tried_again_and_named_again_by_the_next_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An incremental run does not forget a fallback: the file is parsed again (and named again, so
    ``--strict`` keeps failing) until it goes through, and then it is indexed whole."""
    repo = _repo(tmp_path / "shop", {})
    extract = JavaScriptExtractor.extract

    def broken_extract(self, record, source):
        if record.path == "web/checkout.js" and source:
            raise KeyError("arrow_function")
        return extract(self, record, source)

    monkeypatch.setattr(JavaScriptExtractor, "extract", broken_extract)
    settings = load_settings(repo, resolver="name")
    embedder = embedder_for(settings)
    store = KuzuStore(repo / ".cg" / "graph.kuzu")
    try:
        first = index_repository(settings, store, embedder)
        again = index_repository(settings, store, embedder)
        assert [(f.path, f.stage) for f in first.failed] == [("web/checkout.js", "parse")]
        assert again.mode == "incremental" and [(f.path, f.stage) for f in again.failed] == [
            ("web/checkout.js", "parse")
        ]
        monkeypatch.undo()
        fixed = index_repository(settings, store, embedder)
        assert fixed.mode == "incremental" and fixed.failed == []
        callers = store.calls(["web/coupons.js::applyCoupon"], "in")
        assert [c.src for c in callers] == ["web/checkout.js::checkout"]
        assert index_repository(settings, store, embedder).changed == 0  # and it stays through
    finally:
        store.close()
