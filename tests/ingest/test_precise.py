"""The precise pass (cg/ingest/resolve/scip.py): scip-typescript's answers on the polyglot fixture's
TypeScript service and JavaScript worker, the calls only a compiler resolves (through an injected
dependency's field, a destructured parameter, a callback's inferred parameter), the fallback to the
generic resolver when Node or the indexer is missing, slow or broken, and the rules that keep a
repository from running or writing anything through it.

The real indexers are the ones scripts/test installs: scip-typescript from tools/npm (npm
ci) and scip-go from tools/scip-go (go build); CG_TEST_SCIP_TYPESCRIPT and CG_TEST_SCIP_GO name them.
Under CI=true their absence fails these tests instead of skipping them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from cg.config import ConfigError, load_settings
from cg.ingest.pipeline import IndexSummary, extract_repository, resolve_extractions
from cg.ingest.resolve.scip import Answer, parse_symbol, read_index, read_java
from cg.ingest.resolve.scip_schema import DEFINITION, index_class
from cg.model import Edge
from tests.files import write_tree

POLYGLOT = Path(__file__).resolve().parents[1] / "fixtures" / "polyglot"
ROOT = Path(__file__).resolve().parents[2]
WEB = "payments-web/server/services"
WORKER = "webhook-worker/src"


def _installed(variable: str, local: Path, needs: str, how: str) -> str:
    found = os.environ.get(variable) or (str(local) if local.exists() else "")
    if not found or shutil.which(needs) is None:
        if os.environ.get("CI"):
            pytest.fail(f"{local.name} is not installed (scripts/test installs it: {how})")
        pytest.skip(f"{local.name} is not installed ({how})")
    return found


@pytest.fixture(scope="module")
def indexer() -> str:
    local = ROOT / "tools" / "npm" / "node_modules" / ".bin" / "scip-typescript"
    return _installed("CG_TEST_SCIP_TYPESCRIPT", local, "node", "npm ci --prefix tools/npm")


@pytest.fixture(scope="module")
def go_indexer() -> str:
    local = ROOT / "tools" / "scip-go" / "bin" / "scip-go"
    return _installed("CG_TEST_SCIP_GO", local, "go", "cd tools/scip-go && go build -o bin/scip-go <its module>")


def _resolve(repo: Path, **settings) -> tuple[list[Edge], IndexSummary]:
    loaded = load_settings(repo, resolver="name", **settings)
    extractions, _ = extract_repository(loaded)
    summary = IndexSummary(str(repo), "none")
    edges, _ = resolve_extractions(loaded, extractions, summary=summary)
    return [e for e in edges if e.type == "CALLS"], summary


def _calls(edges: list[Edge], src: str, line: int) -> dict[str, str]:
    return {e.dst: e.resolved_by for e in edges if e.src == src and e.line == line}


@pytest.fixture(scope="module")
def java_indexer() -> str:
    tool = ROOT / "tools" / "javaparser"
    built = (tool / "classes" / "CgJavaResolve.class").exists()  # the launcher is there built or not
    local = tool / "bin" / "cg-javaparser" if built else tool / "unbuilt" / "cg-javaparser"
    return _installed("CG_TEST_JAVAPARSER", local, "java", "tools/javaparser/build")


@pytest.fixture(scope="module")
def precise(indexer: str, go_indexer: str, java_indexer: str) -> tuple[list[Edge], IndexSummary]:
    return _resolve(POLYGLOT, precise="auto", scip_typescript=indexer, scip_go=go_indexer, javaparser=java_indexer)


@pytest.fixture(scope="module")
def generic() -> tuple[list[Edge], IndexSummary]:
    return _resolve(POLYGLOT, precise="off")


# -- what only the compiler resolves -------------------------------------------------------------
def test_a_call_through_an_injected_dependency_reaches_the_service(precise, generic):
    pay = f"{WEB}/invoices.ts::InvoiceService.payInvoice"
    run = f"{WEB}/payouts.ts::runPayouts"
    # deps.invoices.payInvoice(invoice): deps is a PayoutDeps, whose invoices field is an InvoiceService
    assert _calls(precise[0], run, 20) == {pay: "scip"}
    assert pay not in _calls(generic[0], run, 20)
    # { invoices }: PayoutDeps destructured, then called inside the callback handed to open.map
    batch = f"{WEB}/payouts.ts::payBatch"
    assert _calls(precise[0], batch, 36) == {pay: "scip", "Array.map": "scip", "Promise.all": "name"}
    assert pay not in _calls(generic[0], batch, 36)


def test_a_name_the_compiler_binds_to_two_declarations_stays_ambiguous(precise, generic):
    # reportFailure is a global function of two script files (alerts.js, legacy/alerts.js): the
    # compiler reports both declarations at the call, so the call is not guessed either way
    worker = f"{WORKER}/webhooks.js::processWebhook"
    assert _calls(generic[0], worker, 27) == {"reportFailure": "ambiguous"}
    assert _calls(precise[0], worker, 27) == {"reportFailure": "ambiguous"}


def test_new_reaches_the_class_and_its_constructor(precise):
    made = _calls(precise[0], "payments-web/server/controllers/invoices.ts::defaultController", 17)
    assert made[f"{WEB}/invoices.ts::InvoiceService"] == "scip"
    assert f"{WEB}/invoices.ts::InvoiceService.constructor" in made
    assert made[f"{WEB}/gateway.ts::StripeGateway"] == "scip"


def test_a_call_through_an_interface_names_the_interface_method(precise):
    charge = f"{WEB}/gateway.ts::PaymentGateway.charge"
    assert _calls(precise[0], f"{WEB}/invoices.ts::InvoiceService.payInvoice", 26) == {charge: "scip"}
    assert _calls(precise[0], f"{WEB}/payouts.ts::chargeTopUp", 31) == {charge: "scip"}


def test_a_call_through_a_function_typed_property_names_the_property(precise):
    """``hooks.onPaid(receipt)``: the callee is a property whose type is a function (stated, or a type
    alias of a function type declared in the same file), the way callbacks are passed in options
    objects. The compiler names the property; cg keeps such a property as a definition of its interface
    (a method without a body, like a method signature), so the call lands there. A property that is
    not a function (``label: string``) is no definition, nor is a member of an object type nested in
    the interface (``audit?: { onPaid: ... }``: it belongs to that anonymous type)."""
    run = f"{WEB}/payouts.ts::runPayoutsWithHooks"
    assert _calls(precise[0], run, 55) == {f"{WEB}/payouts.ts::PayoutHooks.onPaid": "scip"}
    assert _calls(precise[0], run, 57) == {f"{WEB}/payouts.ts::PayoutHooks.onDeclined": "scip"}
    loaded = load_settings(POLYGLOT, resolver="name")
    extractions, _ = extract_repository(loaded)
    owner = f"{WEB}/payouts.ts::PayoutHooks."
    hooks = {s.id.removeprefix(owner): s.kind for ex in extractions for s in ex.symbols if s.id.startswith(owner)}
    assert hooks == {"onPaid": "method", "onDeclined": "method"}


def test_builtins_are_named_and_the_share_resolved_rises(precise, generic):
    assert _calls(precise[0], "payments-web/web/components/InvoiceList.tsx::InvoiceList", 14).get("Array.map") == "scip"
    assert precise[1].precise == {
        "javascript": "scip-typescript: 6 of 7 files",  # bin/webhook-worker has no extension TypeScript reads
        "typescript": "scip-typescript: 12 of 12 files",
        "go": "scip-go: 6 of 6 files",
        "java": "cg-javaparser: 10 of 10 files",
    }

    def share(edges: list[Edge]) -> float:
        web = [e for e in edges if e.src.startswith(("payments-web/", "webhook-worker/"))]
        return sum(e.resolved_by not in ("unresolved", "ambiguous") for e in web) / len(web)

    assert share(precise[0]) > share(generic[0]) + 0.07  # 0.80 -> 0.88 when written


def test_go_through_a_generic_functions_result_and_the_standard_library(precise, generic):
    # must(s.store.LoadPayment(id)).Declined(): the type comes out of a generic function's instantiation
    declined = "payments-go/internal/store/store.go::Payment.Declined"
    is_declined = "payments-go/internal/server/sweep.go::Server.IsDeclined"
    assert _calls(precise[0], is_declined, 44) == {
        declined: "scip",
        "payments-go/internal/server/sweep.go::must": "scip",
        "payments-go/internal/store/store.go::PaymentStore.LoadPayment": "scip",
    }
    assert declined not in _calls(generic[0], is_declined, 44)
    # row.Scan on the *sql.Row that db.QueryRow returns: named by its import path
    load = "payments-go/internal/store/store.go::PostgresStore.LoadPayment"
    assert _calls(precise[0], load, 44) == {"database/sql.Row.Scan": "scip"}
    assert _calls(generic[0], load, 44) == {"row.Scan": "unresolved"}
    # s.store.SavePayment through the PaymentStore interface field, as the type checker names it
    schedule = "payments-go/internal/retry/retry.go::SchedulePaymentRetry"
    assert _calls(precise[0], schedule, 36) == {"payments-go/internal/store/store.go::PaymentStore.SavePayment": "scip"}


def test_java_through_a_list_of_injected_interfaces(precise, generic):
    """``for (Scheduler followUp : followUps) followUp.schedule(invoice)``: the loop variable's type
    comes from the injected ``List<Scheduler>``, which JavaParser's symbol solver follows and the
    generic resolver does not; the library and JDK calls it answers keep the names the imports give."""
    service = "billing-java/src/main/java/com/acme/billing/service/InvoiceService.java::InvoiceService.charge~2"
    schedule = "billing-java/src/main/java/com/acme/billing/retry/Scheduler.java::Scheduler.schedule"
    assert _calls(precise[0], service, 40) == {schedule: "scip"}
    assert _calls(generic[0], service, 40) == {"followUp.schedule": "unresolved"}
    gateway = "billing-java/src/main/java/com/acme/billing/gateway/PaymentGateway.java::PaymentGateway.charge"
    assert _calls(precise[0], service, 34) == {gateway: "scip"}  # through the injected gateway field
    backoff = "billing-java/src/main/java/com/acme/billing/retry/RetryScheduler.java::RetryScheduler.backoff"
    assert _calls(precise[0], backoff, 16) == {"java.time.Duration.ofMinutes": "import"}


def test_java_overloads_of_one_arity_are_told_apart_by_type(java_indexer, tmp_path):
    """``ledger.record(invoice)`` and ``new Ledger(invoice)`` where the class has two overloads and
    two constructors taking one argument: the solver picks by the argument's type, where counting
    arguments could only name both."""
    files = {
        "src/main/java/com/acme/ledger/Invoice.java": (
            "package com.acme.ledger;\n\npublic class Invoice {\n    public long cents;\n}\n"
        ),
        "src/main/java/com/acme/ledger/Ledger.java": (
            "package com.acme.ledger;\n\n"
            "public class Ledger {\n"
            "    public Ledger(String name) {\n    }\n\n"
            "    public Ledger(Invoice opening) {\n        record(opening);\n    }\n\n"
            "    public void record(String note) {\n    }\n\n"
            "    public void record(Invoice invoice) {\n    }\n"
            "}\n"
        ),
        "src/main/java/com/acme/ledger/Billing.java": (
            "package com.acme.ledger;\n\n"
            "public class Billing {\n"
            "    public Ledger open(Invoice first) {\n"
            "        Ledger ledger = new Ledger(first);\n"
            "        ledger.record(first);\n"
            "        return ledger;\n    }\n"
            "}\n"
        ),
    }
    repo = write_tree(tmp_path / "ledger", files)
    ledger = "src/main/java/com/acme/ledger/Ledger.java::Ledger"
    open_ = "src/main/java/com/acme/ledger/Billing.java::Billing.open"
    edges, summary = _resolve(repo, precise="auto", javaparser=java_indexer)
    assert summary.precise["java"] == "cg-javaparser: 3 of 3 files"
    assert _calls(edges, open_, 5) == {ledger: "scip", f"{ledger}.Ledger~2": "scip"}  # Ledger(Invoice)
    assert _calls(edges, open_, 6) == {f"{ledger}.record~2": "scip"}  # record(Invoice)
    generic_edges, _ = _resolve(repo, precise="off")
    assert _calls(generic_edges, open_, 6) == {f"{ledger}.record": "name", f"{ledger}.record~2": "name"}


def test_other_languages_keep_the_generic_resolver(precise, generic):
    def of(edges: list[Edge], prefix: str) -> set[tuple[str, str, int]]:
        return {(e.src, e.dst, e.line) for e in edges if e.src.startswith(prefix)}

    assert of(precise[0], "invoice-cli/") == of(generic[0], "invoice-cli/")
    assert not any(e.resolved_by == "scip" for e in generic[0])


def test_scip_typescript_without_hover_texts_answers_the_same(indexer, monkeypatch):
    """cg runs scip-typescript through its runner (scip._lean), which leaves out the hover texts cg does
    not read: the answers are those of the program run as it is, and the index holds no definition's texts."""
    import cg.ingest.resolve.scip as scip

    paths = sorted(str(p.relative_to(POLYGLOT)) for p in POLYGLOT.rglob("*") if p.suffix in (".ts", ".tsx", ".js"))
    command, why = scip.find_indexer(scip.TYPESCRIPT, indexer)
    assert command is not None, why

    def answers() -> tuple[scip.Answers, object]:
        indexes, why = scip.run_typescript(POLYGLOT, paths, command, 120, paths)
        assert indexes is not None, why
        ((base, data),) = indexes
        read = read_index(data, set(paths), lambda rel: (POLYGLOT / rel).read_bytes(), scip.TYPESCRIPT, base)
        return read, scip.parse_index(data)

    lean, lean_index = answers()
    monkeypatch.setattr(scip, "_lean", lambda command, tmp: command)
    plain, plain_index = answers()
    assert lean == plain and sum(len(v) for v in lean.values()) > 20
    # what is left is a file's own module symbol, one per document
    texts = [sum(len(d.symbols) for d in index.documents) for index in (lean_index, plain_index)]
    assert texts[0] <= len(lean_index.documents) < texts[1]


# -- a repository is untrusted: nothing written, nothing run -------------------------------------
def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}


def test_the_repository_is_left_exactly_as_it_was(indexer, go_indexer, java_indexer, tmp_path):
    repo = tmp_path / "polyglot"
    shutil.copytree(POLYGLOT, repo)
    before = _tree(repo)
    edges, summary = _resolve(
        repo, precise="auto", scip_typescript=indexer, scip_go=go_indexer, javaparser=java_indexer
    )
    assert summary.precise["javascript"].startswith("scip-typescript") and summary.precise["go"].startswith("scip-go:")
    assert summary.precise["java"].startswith("cg-javaparser:")
    assert any(e.resolved_by == "scip" and e.src.startswith("payments-go/") for e in edges)
    # no tsconfig.json inferred beside the worker's loose .js files, no go.sum, no index left behind
    assert _tree(repo) == before


def test_a_repository_cannot_name_the_program_cg_runs(tmp_path, monkeypatch):
    for setting in ("scip_typescript", "scip_go", "javaparser"):
        (tmp_path / "cg.toml").write_text(f'{setting} = "tools/steal-keys.js"\n')
        with pytest.raises(ConfigError, match="cannot set it"):
            load_settings(tmp_path)
    (tmp_path / "cg.toml").write_text('precise = "off"\n')  # whether to run one is the repository's to say
    assert load_settings(tmp_path).precise == "off"
    monkeypatch.setenv("CG_SCIP_TYPESCRIPT", "/opt/scip/scip-typescript")
    assert load_settings(tmp_path).scip_typescript == "/opt/scip/scip-typescript"


# -- every failure falls back to the generic resolver, and says why ------------------------------
def _same_as_generic(edges: list[Edge], generic_edges: list[Edge]) -> bool:
    return {(e.src, e.dst, e.line, e.resolved_by) for e in edges} == {
        (e.src, e.dst, e.line, e.resolved_by) for e in generic_edges
    }


def test_without_node_on_path_the_generic_resolver_answers(indexer, java_indexer, generic, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no node, no java, no scip-typescript, no scip-go
    monkeypatch.delenv("JAVA_HOME", raising=False)
    edges, summary = _resolve(POLYGLOT, precise="auto", scip_typescript=indexer, javaparser=java_indexer)
    assert summary.precise["typescript"] == summary.precise["javascript"] == "Node.js (node) not on PATH"
    assert summary.precise["go"].startswith("scip-go not found (go install")
    assert summary.precise["java"].startswith("cg-javaparser failed (exit 127)")
    assert summary.precise["java"].endswith("java: not found")
    assert _same_as_generic(edges, generic[0])
    edges, summary = _resolve(POLYGLOT, precise="auto")  # nor an indexer to find on PATH
    assert summary.precise["typescript"].startswith("scip-typescript not found")
    assert summary.precise["java"].startswith("cg-javaparser not found (build it with tools/javaparser/build")
    assert _same_as_generic(edges, generic[0])


def test_a_slow_or_broken_indexer_falls_back(indexer, go_indexer, java_indexer, generic, tmp_path):
    edges, summary = _resolve(
        POLYGLOT,
        precise="auto",
        scip_typescript=indexer,
        scip_go=go_indexer,
        javaparser=java_indexer,
        precise_timeout=0.01,
    )
    assert summary.precise["typescript"] == "scip-typescript ran over precise_timeout (0.01 s)"
    assert summary.precise["go"] == "scip-go ran over precise_timeout (0.01 s)"
    assert summary.precise["java"] == "cg-javaparser ran over precise_timeout (0.01 s)"
    assert _same_as_generic(edges, generic[0])
    broken = tmp_path / "scip-typescript.js"
    broken.write_text("process.stderr.write('TypeError: cannot read tsconfig\\n'); process.exit(3);\n")
    edges, summary = _resolve(POLYGLOT, precise="auto", scip_typescript=str(broken))
    assert summary.precise["typescript"] == "scip-typescript failed (exit 3): TypeError: cannot read tsconfig"
    assert _same_as_generic(edges, generic[0])
    garbage = tmp_path / "garbage.js"
    garbage.write_text(
        "const out = process.argv[process.argv.indexOf('--output') + 1];"
        "require('fs').writeFileSync(out, Buffer.from([0x0a, 0xff, 0xff, 0xff]));\n"
    )
    edges, summary = _resolve(POLYGLOT, precise="auto", scip_typescript=str(garbage))
    assert summary.precise["typescript"] == "scip-typescript wrote an index that does not parse"
    assert _same_as_generic(edges, generic[0])


# -- reading SCIP --------------------------------------------------------------------------------
def test_symbols_parse_into_package_and_descriptors():
    assert parse_symbol("scip-typescript npm typescript 5.9.3 lib/`lib.es5.d.ts`/Array#map().") == (
        "typescript",
        [("lib", "/"), ("lib.es5.d.ts", "/"), ("Array", "#"), ("map", "m")],
    )
    assert parse_symbol("scip-typescript npm payments-web 1.4.0 server/`a.ts`/pay().(invoice)") == (
        "payments-web",
        [("server", "/"), ("a.ts", "/"), ("pay", "m"), ("invoice", "(")],
    )
    assert parse_symbol("scip-go gomod github.com/acme/pay  v2 v1.0.0 `retry``s`/Retry#[T]")[1] == [
        ("retry`s", "/"),
        ("Retry", "#"),
        ("T", "["),
    ]
    assert (
        parse_symbol("scip-go gomod github.com/acme/pay  v2 v1.0.0 `retry``s`/Retry#[T]")[0] == "github.com/acme/pay v2"
    )
    assert parse_symbol("not a symbol") is None


def _index(*documents: tuple[str, list[tuple[list[int], str, int]]]) -> bytes:
    index = index_class()()
    for path, occurrences in documents:
        doc = index.documents.add(relative_path=path, language="TypeScript")
        for rng, symbol, roles in occurrences:
            doc.occurrences.add(range=rng, symbol=symbol, symbol_roles=roles)
    return index.SerializeToString()


def test_references_map_to_definitions_by_byte_column():
    pkg = "scip-typescript npm payments-web 1.4.0 "
    source = 'const note = "réessai ⏳"; retryPayment(note);\nnew Ledger();\n'.encode()
    data = _index(
        ("src/retry.ts", [([4, 16, 28], pkg + "src/`retry.ts`/retryPayment().", DEFINITION)]),
        ("src/ledger.ts", [([2, 13, 19], pkg + "src/`ledger.ts`/Ledger#", DEFINITION)]),
        (
            "src/app.ts",
            [
                ([0, 26, 38], pkg + "src/`retry.ts`/retryPayment().", 0),  # after 2 non-ASCII chars
                ([0, 39, 43], "local 0", 0),
                ([1, 4, 10], pkg + "src/`ledger.ts`/Ledger#`<constructor>`().", 0),
                ([1, 0, 3], "scip-typescript npm typescript 5.9.3 lib/`lib.es5.d.ts`/Array#map().", 0),
                ([1, 11, 12], pkg + "src/`app.ts`/main().(invoice)", 0),
            ],
        ),
    )
    answers = {k: v[0] for k, v in read_index(data, {"src/app.ts"}, lambda path: source)["src/app.ts"].items()}
    column = source.index(b"retryPayment")
    assert column == 29 and answers[(1, column)].path == "src/retry.ts"
    assert (answers[(1, column)].line, answers[(1, column)].name) == (5, "retryPayment")
    assert (1, 42) not in answers  # a local with no definition in the index
    assert (answers[(2, 4)].path, answers[(2, 4)].name, answers[(2, 4)].line) == ("src/ledger.ts", "Ledger", 3)
    assert answers[(2, 0)].external == "Array.map"
    assert (2, 11) not in answers  # a parameter: not the function it belongs to


def test_a_type_literal_member_is_found_from_another_program():
    """scip-typescript names a member of an anonymous object type by a counter of the type literals it
    has met (``KyInstance#typeLiteral0:get.``), which differs between two programs of one run: a test
    file indexed as a loose file refers to ``typeLiteral111`` of a type its project's program
    defined as ``typeLiteral0``. The counter is not part of the name cg matches."""
    pkg = "scip-typescript npm ky 1.7.2 "
    source = b"await ky.get(url).text();\n"
    data = _index(
        ("source/types/ky.ts", [([29, 1, 4], pkg + "source/types/`ky.ts`/KyInstance#typeLiteral0:get.", DEFINITION)]),
        ("test/main.ts", [([0, 9, 12], pkg + "source/types/`ky.ts`/KyInstance#typeLiteral111:get.", 0)]),
    )
    answers = read_index(data, {"test/main.ts"}, lambda path: source)["test/main.ts"]
    assert answers[(1, 9)] == (Answer(name="get", path="source/types/ky.ts", line=30),)


def test_java_answers_are_read_by_utf16_column_and_bad_lines_are_skipped():
    """cg-javaparser's lines: a definition (D), a JDK member (E), a file it read (F); columns count
    UTF-16 units, as Java's chars do, and are keyed by byte column, as tree-sitter counts."""
    source = 'String note = "réessai ⏳"; retry.schedule(note);\nnew Ledger(note);\n'.encode()
    column = source.index(b"schedule")
    tsv = (
        b"src/Billing.java\t0\t0\tF\t\t0\t\t0\n"
        b"src/Billing.java\t1\t33\tD\tsrc/Retry.java\t7\tschedule\t0\n"
        b"src/Billing.java\t1\t0\tE\tjava.lang.String\t0\tString\t0\n"
        b"src/Billing.java\t2\t4\tD\tsrc/Ledger.java\t3\tLedger\t9\n"  # `new Ledger(...)`: its constructor at line 9
        b"src/Billing.java\tone\t0\tD\tsrc/Retry.java\t7\tschedule\t0\n"  # not a line number
        b"src/Billing.java\t1\t5\tD\tsrc/Retry.java\t7\tschedule\n"  # a field short
        b"src/Other.java\t1\t0\tE\tjava.lang.String\t0\tString\t0\n"  # not asked for
        b"src/Empty.java\t0\t0\tF\t\t0\t\t0\n"
        b"src/Billing.java\t9\t0\tE\tjava.lang.String\t0\tString\t0\n"  # past the file's end
    )
    answers = read_java(tsv, {"src/Billing.java", "src/Empty.java"}, lambda path: source)
    assert column == 36 and answers["src/Billing.java"] == {
        (1, column): (Answer(name="schedule", path="src/Retry.java", line=7),),
        (1, 0): (Answer(name="String", external="java.lang.String"),),
        (2, 4): (Answer(name="Ledger", path="src/Ledger.java", line=3, constructor=9),),
    }
    assert answers["src/Empty.java"] == {}


def test_an_incremental_java_run_gives_what_a_full_rebuild_gives(java_indexer, tmp_path):
    """The Java service edited twice (a new follow-up call through the scheduler interface, then a
    method the interface gains and its use): incremental == full rebuild each time."""
    repo, service, scheduler = _copy(
        tmp_path,
        "billing-java",
        "src/main/java/com/acme/billing/service/InvoiceService.java",
        "src/main/java/com/acme/billing/retry/Scheduler.java",
    )
    edits = [
        lambda: service.write_text(
            service.read_text().replace(
                "        return false;\n    }\n}",
                "        return false;\n    }\n\n"
                "    /** Reminds each follow-up scheduler once. */\n"
                "    public void remind(Invoice invoice) {\n"
                "        for (Scheduler followUp : followUps) {\n"
                "            followUp.schedule(invoice);\n"
                "        }\n    }\n}",
            )
        ),
        lambda: (
            scheduler.write_text(scheduler.read_text().replace("}", "    void cancel(Invoice invoice);\n}", 1)),
            service.write_text(
                service.read_text().replace(
                    "followUp.schedule(invoice);\n        }\n    }\n}", "followUp.cancel(invoice);\n        }\n    }\n}"
                )
            ),
        ),
    ]
    got = _incremental_equals_rebuild(repo, edits, javaparser=java_indexer)
    calls = {(row[0], row[1], row[3]) for row in got["CALLS"] if row[0].endswith("::InvoiceService.remind")}
    cancel = "src/main/java/com/acme/billing/retry/Scheduler.java::Scheduler.cancel"
    assert (
        "src/main/java/com/acme/billing/service/InvoiceService.java::InvoiceService.remind",
        cancel,
        "scip",
    ) in calls


# -- incremental runs ----------------------------------------------------------------------------
def _incremental_equals_rebuild(repo: Path, edits: list, **programs: str) -> dict:
    """Index ``repo``, then after each edit an incremental run whose graph must equal a full rebuild's
    of the same tree; the last graph."""
    from cg.embed import embedder_for
    from cg.graph.kuzu_store import KuzuStore
    from cg.ingest.pipeline import index_repository
    from tests.graphdump import differences, dump

    options = {"resolver": "name", "precise": "auto", "history_commits": 0, **programs}
    embedder = embedder_for(load_settings(repo, **options))

    def rebuilt(n: int) -> dict:
        ref = repo.parent / f"rebuilt-{n}" / repo.name
        shutil.copytree(repo, ref, ignore=shutil.ignore_patterns(".cg"))
        store = KuzuStore(ref / ".cg" / "graph.kuzu")
        try:
            index_repository(load_settings(ref, **options), store, embedder, full=True)
            return dump(store)
        finally:
            store.close()

    store = KuzuStore(repo / ".cg" / "graph.kuzu")
    try:
        index_repository(load_settings(repo, **options), store, embedder)
        for n, edit in enumerate(edits):
            edit()
            summary = index_repository(load_settings(repo, **options), store, embedder)
            assert summary.mode == "incremental" and all(
                v.startswith(("scip-typescript:", "scip-go:", "cg-javaparser:")) for v in summary.precise.values()
            )
            got = dump(store)
            diff = differences(got, rebuilt(n))
            assert not diff, "\n".join(diff)
        return got
    finally:
        store.close()


def _copy(tmp_path: Path, project: str, *files: str) -> tuple[Path, ...]:
    """A copy of one of the fixture's projects, and the paths of ``files`` in it."""
    repo = tmp_path / project
    shutil.copytree(POLYGLOT / project, repo)
    return (repo, *(repo / f for f in files))


def _append(path: Path, text: str):
    """An edit: ``text`` added at the end of ``path``."""
    return lambda: path.write_text(path.read_text() + text)


def test_an_incremental_run_gives_what_a_full_rebuild_gives(indexer, tmp_path):
    """Edit the TypeScript service twice (a new call through an injected dependency, then a method the
    interface gains and a caller of it): after each incremental run the graph equals a full rebuild's."""
    repo, payouts, gateway = _copy(tmp_path, "payments-web", "server/services/payouts.ts", "server/services/gateway.ts")
    edits = [
        _append(
            payouts,
            "\n/** Runs the payouts, then charges the fee through the injected gateway. */\n"
            "export async function settle(deps: PayoutDeps, open: Invoice[]): Promise<Receipt> {\n"
            "  await runPayouts(deps, open);\n"
            '  return deps.gateway.charge("fee", 50);\n'
            "}\n",
        ),
        lambda: (
            gateway.write_text(
                gateway.read_text()
                .replace(
                    "  charge(invoiceId: string, cents: number): Promise<Receipt>;\n",
                    "  charge(invoiceId: string, cents: number): Promise<Receipt>;\n"
                    "  refund(invoiceId: string): Promise<void>;\n",
                )
                .replace(
                    "    return { invoiceId, chargedAt: new Date() };\n  }\n",
                    "    return { invoiceId, chargedAt: new Date() };\n  }\n\n"
                    "  async refund(invoiceId: string): Promise<void> {\n"
                    "    await this.client.refunds.create({ payment_intent: invoiceId });\n  }\n",
                )
            ),
            payouts.write_text(
                payouts.read_text() + "\nexport async function reverse(deps: PayoutDeps, id: string) {\n"
                "  await deps.gateway.refund(id);\n}\n"
            ),
        ),
    ]
    got = _incremental_equals_rebuild(repo, edits, scip_typescript=indexer)
    calls = {(row[0], row[1], row[3]) for row in got["CALLS"] if row[0].endswith(("::settle", "::reverse"))}
    assert ("server/services/payouts.ts::settle", "server/services/gateway.ts::PaymentGateway.charge", "scip") in calls
    assert ("server/services/payouts.ts::reverse", "server/services/gateway.ts::PaymentGateway.refund", "scip") in calls


def test_an_incremental_run_over_loose_scripts_reads_them_all(indexer, tmp_path):
    """The worker's .js files have no tsconfig.json and share one global scope: an edit of the file
    that calls the global reportFailure (declared once here) is answered as a full run answers it,
    because the loose project of an incremental run holds every loose file, not the edited one alone."""
    repo = tmp_path / "worker"
    shutil.copytree(POLYGLOT / "webhook-worker", repo)
    (repo / "src" / "legacy" / "alerts.js").unlink()
    webhooks = repo / "src" / "webhooks.js"
    edit = [lambda: webhooks.write_text("// v2\n" + webhooks.read_text())]
    got = _incremental_equals_rebuild(repo, edit, scip_typescript=indexer)
    calls = {(row[0], row[1], row[3]) for row in got["CALLS"] if row[0] == "src/webhooks.js::processWebhook"}
    assert ("src/webhooks.js::processWebhook", "src/alerts.js::reportFailure", "scip") in calls


def test_an_incremental_go_run_gives_what_a_full_rebuild_gives(go_indexer, tmp_path):
    """A Go module edited twice (a new caller of a generic function's result, then a method the
    store interface gains, its implementation and a caller): incremental == full rebuild each time."""
    repo, sweep, store = _copy(tmp_path, "payments-go", "internal/server/sweep.go", "internal/store/store.go")
    edits = [
        _append(
            sweep,
            "\n// Attempts is how often the payment with a known id was tried.\n"
            "func (s *Server) Attempts(id string) int {\n\treturn must(s.store.LoadPayment(id)).Tries()\n}\n",
        ),
        lambda: (
            store.write_text(
                store.read_text().replace(
                    'func (p *Payment) Declined() bool { return p.Status == "declined" }\n',
                    'func (p *Payment) Declined() bool { return p.Status == "declined" }\n\n'
                    "// Tries is how many attempts were made.\nfunc (p *Payment) Tries() int { return p.Attempts }\n",
                )
            ),
        ),
    ]
    got = _incremental_equals_rebuild(repo, edits, scip_go=go_indexer)
    calls = {(row[0], row[1], row[3]) for row in got["CALLS"] if row[0].endswith("::Server.Attempts")}
    assert ("internal/server/sweep.go::Server.Attempts", "internal/store/store.go::Payment.Tries", "scip") in calls


# -- the pass runs beside the run's own work (cg/ingest/pipeline.py, _start_precise) -------------
# A stand-in for scip-typescript that never finishes: it says its pid, then waits a minute.
HANGING_INDEXER = (
    "require('fs').writeFileSync(process.env.CG_TEST_PID_FILE, String(process.pid));\nsetTimeout(() => {}, 60000);\n"
)


def test_ctrl_c_while_the_indexer_works_stops_the_run_and_the_indexer(tmp_path):
    """The indexer runs in a process group of its own (so a hang can be killed whole), which a
    terminal's Ctrl-C does not reach: the run must stop it itself, and stop at once."""
    import signal
    import subprocess
    import sys
    import time

    if shutil.which("node") is None:
        if os.environ.get("CI"):
            pytest.fail("node is not on PATH (scripts/test requires it)")
        pytest.skip("node is not on PATH")
    repo = tmp_path / "web"
    shutil.copytree(POLYGLOT / "payments-web", repo)
    hanging = tmp_path / "scip-typescript.js"
    hanging.write_text(HANGING_INDEXER)
    pid_file = tmp_path / "indexer.pid"
    cg = Path(sys.executable).parent / "cg"
    command = [str(cg)] if cg.exists() else [sys.executable, "-m", "cg.cli"]
    env = {
        **os.environ,
        "CG_RESOLVER": "name",
        "CG_HISTORY_COMMITS": "0",
        "CG_PRECISE": "auto",  # tests/conftest.py turns it off for every other test
        "CG_SCIP_TYPESCRIPT": str(hanging),
        "CG_TEST_PID_FILE": str(pid_file),
    }
    proc = subprocess.Popen(
        [*command, "index", str(repo), "--embed", "later"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 120
        while not pid_file.exists() or not pid_file.read_text():
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the indexer never started"
            time.sleep(0.05)
        indexer = int(pid_file.read_text())
        proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        _, err = proc.communicate(timeout=60)
        assert time.monotonic() - sent < 3.0, f"Ctrl-C took {time.monotonic() - sent:.1f} s"
        assert proc.returncode != 0
        assert "Traceback" not in err
        while _alive(indexer) and time.monotonic() - sent < 5.0:
            time.sleep(0.05)
        assert not _alive(indexer), "the indexer outlived the run"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if pid_file.exists() and pid_file.read_text() and _alive(int(pid_file.read_text())):
            os.kill(int(pid_file.read_text()), 9)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting to be reaped does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_checkout_whose_tsconfig_cannot_load_and_leaves_its_tests_out_is_answered(indexer, tmp_path):
    """A fresh clone of a TypeScript HTTP client (ky's shape): its tsconfig.json extends a package that
    is not installed, which stopped the compiler before it indexed anything, and includes only
    "source", so the tests under it were in no program. Both are indexed as loose files now: the call
    through a destructured field in the library and the call on a factory's result in a test are the
    compiler's answers."""
    files = {
        "tsconfig.json": '{\n  // shared settings\n  "extends": "@acme/tsconfig",\n  "include": ["source"],\n}\n',
        "source/retry.ts": (
            "export class RetryPolicy {\n"
            "  constructor(private readonly limit: number) {}\n\n"
            "  shouldRetry(attempt: number, status: number): boolean {\n"
            "    return attempt < this.limit && status >= 500;\n"
            "  }\n}\n"
        ),
        "source/client.ts": (
            "import {RetryPolicy} from './retry.js';\n\n"
            "export class HttpClient {\n"
            "  readonly policy: RetryPolicy;\n\n"
            "  constructor(limit: number) {\n"
            "    this.policy = new RetryPolicy(limit);\n"
            "  }\n\n"
            "  async send(url: string): Promise<Response> {\n"
            "    const {policy} = this;\n"
            "    for (let attempt = 0; ; attempt++) {\n"
            "      const response = await fetch(url);\n"
            "      if (!policy.shouldRetry(attempt, response.status)) return response;\n"
            "    }\n"
            "  }\n}\n\n"
            "export const createClient = (limit: number) => new HttpClient(limit);\n"
        ),
        "test/client.test.ts": (
            "import {createClient} from '../source/client.js';\n\n"
            "export async function retriesServerErrors() {\n"
            "  const client = createClient(2);\n"
            "  await client.send('https://api.example.test/invoices');\n"
            "}\n"
        ),
    }
    repo = write_tree(tmp_path / "http-client", files)
    edges, summary = _resolve(repo, precise="auto", scip_typescript=indexer)
    assert summary.precise["typescript"] == "scip-typescript: 3 of 3 files"
    assert _calls(edges, "source/client.ts::HttpClient.send", 14) == {
        "source/retry.ts::RetryPolicy.shouldRetry": "scip"
    }
    assert _calls(edges, "test/client.test.ts::retriesServerErrors", 5) == {"source/client.ts::HttpClient.send": "scip"}
