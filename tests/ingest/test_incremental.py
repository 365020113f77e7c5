"""Incremental `cg index` must give exactly the graph a full rebuild of the same tree gives.

The property test applies random sequences of real edits (tests/ingest/edits.py) to a copy of
examples/shop, runs the incremental index after each edit, and compares the whole graph (nodes with
their properties, edges with theirs, chunk texts) with a full rebuild of a copy of the same tree on
a fresh embedded store, on both backends.

The comparison runs with the name resolver. jedi's answers are not a pure function of the tree: at
its inference limits (executions per script) one site can be answered in one process and not in
another (seen on examples/shop: `self.service.invoices.get` in one full run of three), so even two
full rebuilds of one tree can differ by an edge. The incremental logic under test (which files are
re-parsed, re-resolved, rewritten, deleted) is the same for both resolvers; the jedi-specific rule
(a re-resolved file is asked in full, never a subset of its sites) has its own test below.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cg.ingest.walk as walk_module
from cg.config import load_settings
from cg.embed import Embedder, embedder_for
from cg.graph.kuzu_store import KuzuStore
from cg.ingest.pipeline import index_repository
from tests.conftest import copy_shop
from tests.graphdump import differences, dump
from tests.ingest.edits import EDITS, apply
from tests.neo4j_env import BACKENDS, neo4j_settings


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    settings = load_settings(Path.cwd())
    return embedder_for(settings)


# jedi's per-file time budget turns answers into name-resolver fallbacks on a loaded machine: the
# comparison must not depend on how busy the CPU is
NO_BUDGET = 900.0
RESOLVER = {"resolver": "name", "jedi_budget": NO_BUDGET}


def _open(backend: str, repo: Path):
    if backend == "kuzu":
        return load_settings(repo, **RESOLVER), KuzuStore(repo / ".cg" / "graph.kuzu")
    from cg.graph.neo4j_store import Neo4jStore

    settings = replace(neo4j_settings(repo), **RESOLVER)
    return settings, Neo4jStore(settings)


def _full_rebuild(repo: Path, embedder: Embedder) -> dict:
    """A full index of a copy of the tree as it is now, on a fresh embedded store."""
    with tempfile.TemporaryDirectory() as scratch:
        ref = Path(scratch) / repo.name
        shutil.copytree(repo, ref, ignore=shutil.ignore_patterns(".cg", "__pycache__"))
        store = KuzuStore(ref / ".cg" / "graph.kuzu")
        try:
            summary = index_repository(load_settings(ref, **RESOLVER), store, embedder, full=True)
            assert not summary.jedi_timed_out and not summary.jedi_failed, summary
            return dump(store)
        finally:
            store.close()


# The walk trusts a file's stat once it is older than RACY_NS (cg/ingest/walk.py, stat_key): two
# seconds by default, so a test's files, written a moment before each run, would all be read again and
# the stat path never taken. Here a file counts as settled SETTLE seconds after it was written, and each
# run waits that long first: what the last run read and nobody touched since is then left unread.
SETTLE = 0.06


def _settled_run(settings, store, embedder: Embedder, **kwargs):
    time.sleep(SETTLE)
    with mock.patch.object(walk_module, "RACY_NS", int(SETTLE * 1e9) - 10_000_000):
        return index_repository(settings, store, embedder, **kwargs)


def _check_sequence(backend: str, edits: list[tuple[int, int]], embedder: Embedder) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        repo = copy_shop(Path(scratch) / "shop")
        settings, store = _open(backend, repo)
        try:
            if backend == "neo4j":
                store.reset()
            first = _settled_run(settings, store, embedder)
            assert first.mode == "full"
            done: list[str] = []
            for edit, seed in edits:
                done.append(apply(repo, edit, seed))
                summary = _settled_run(settings, store, embedder)
                assert summary.mode == "incremental", done
                assert not summary.jedi_timed_out and not summary.jedi_failed, summary
                got, want = dump(store), _full_rebuild(repo, embedder)
                diff = differences(got, want)
                assert not diff, "after: " + "; ".join(done) + "\n" + "\n".join(diff)
        finally:
            store.close()


EDIT_SEQUENCES = st.lists(st.tuples(st.integers(0, len(EDITS) - 1), st.integers(0, 10_000)), min_size=1, max_size=3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_incremental_index_equals_full_rebuild(backend: str, embedder: Embedder) -> None:
    @settings(
        max_examples=4 if backend == "kuzu" else 2,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(EDIT_SEQUENCES)
    def check(edits: list[tuple[int, int]]) -> None:
        _check_sequence(backend, edits, embedder)

    check()


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_kind_of_edit_in_turn(backend: str, embedder: Embedder) -> None:
    """One fixed sequence with each edit once, so every kind is exercised on every run."""
    _check_sequence(backend, [(n, 7 + n) for n in range(len(EDITS))], embedder)


def test_a_re_resolved_file_is_asked_of_jedi_in_full(tmp_path: Path, embedder: Embedder) -> None:
    """Renaming a function re-resolves the files that call it, and jedi is handed each of those
    files whole (run_jedi asks every position of a file it is given), not a subset of its sites."""
    from cg.ingest import pipeline
    from cg.ingest.resolve.jedi_resolver import positions_of
    from cg.ingest.resolve.python import jedi_names

    repo = copy_shop(tmp_path / "shop")
    settings = load_settings(repo, jedi_budget=NO_BUDGET)
    store = KuzuStore(repo / ".cg" / "graph.kuzu")
    handed: dict[str, int] = {}
    original = pipeline.run_jedi

    def spy(root, extractions, props, *args, **kwargs):
        handed.update({ex.file.path: len(positions_of(ex, props)) for ex in extractions})
        return original(root, extractions, props, *args, **kwargs)

    try:
        index_repository(settings, store, embedder)
        retry = repo / "shop" / "payments" / "retry.py"
        retry.write_text(retry.read_text().replace("def is_retryable(", "def is_retryable_error("))
        pipeline.run_jedi = spy
        summary = index_repository(settings, store, embedder)
    finally:
        pipeline.run_jedi = original
        store.close()
    assert summary.mode == "incremental" and summary.affected >= 1
    assert "shop/payments/service.py" in handed  # it calls is_retryable: re-resolved
    assert "shop/billing/coupons.py" not in handed  # names nothing retry.py defines
    extractions, _ = pipeline.extract_repository(settings)
    props = jedi_names(extractions)
    full = {ex.file.path: len(positions_of(ex, props)) for ex in extractions}
    assert handed == {path: full[path] for path in handed}
    assert summary.jedi_sites == sum(handed.values())


def _edit_and_compare(tmp_path: Path, embedder: Embedder, files: dict[str, str], path: str, old: str, new: str):
    """Index ``files``, replace ``old`` by ``new`` in ``path``, index again: the summary of that run and
    the differences between its graph and a full rebuild's."""
    repo = tmp_path / "shop"
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    settings, store = _open("kuzu", repo)
    try:
        index_repository(settings, store, embedder)
        edited = repo / path
        assert old in edited.read_text()
        edited.write_text(edited.read_text().replace(old, new))
        summary = index_repository(settings, store, embedder)
        assert summary.mode == "incremental"
        got = dump(store)
    finally:
        store.close()
    return summary, differences(got, _full_rebuild(repo, embedder))


DECORATED_SHOP = {
    "payments/__init__.py": "",
    "payments/retry.py": (
        "import functools\n\n\n"
        "def retry_on_decline(charge):\n"
        '    """Retry a declined charge once."""\n\n'
        "    @functools.wraps(charge)\n"
        "    def wrapper(*args, **kwargs):\n"
        "        try:\n"
        "            return charge(*args, **kwargs)\n"
        "        except ValueError:\n"
        "            return charge(*args, **kwargs)\n\n"
        "    return wrapper\n"
    ),
    "payments/cards.py": (
        "from payments.retry import retry_on_decline\n\n\n"
        "@retry_on_decline\n"
        "def charge_card(amount_cents):\n"
        "    return amount_cents > 0\n"
    ),
    "payments/checkout.py": (
        "from payments.cards import charge_card\n\n\ndef checkout(cart_total):\n    return charge_card(cart_total)\n"
    ),
}


def test_a_changed_decorator_re_resolves_the_callers_of_what_it_decorates(tmp_path: Path, embedder: Embedder) -> None:
    """`checkout()` calls `charge_card`, which `@retry_on_decline` (another file) replaced by its
    wrapper: the edge is checkout -> wrapper. When the decorator stops wrapping (returns the function
    itself), checkout's file names neither the decorator nor anything whose interface changed, yet its
    edge must move to charge_card: the incremental run must give what a full rebuild gives."""
    _, diff = _edit_and_compare(
        tmp_path, embedder, DECORATED_SHOP, "payments/retry.py", "    return wrapper\n", "    return charge\n"
    )
    assert not diff, "\n".join(diff)


def test_mentions_are_recomputed_only_when_a_name_a_document_could_write_changed(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/payment-retries.md mentions `schedule_payment_retry`. A body-only edit changes no name a
    document could write, so the run does not look up every document's mentions again (Django: 0.4 s
    of a one-file edit); renaming the function does, and the graph is then what a full rebuild gives."""
    import cg.ingest.pipeline as pipeline

    built: list[int] = []
    real = pipeline.MentionIndex

    def counting(symbols):
        built.append(1)
        return real(symbols)

    monkeypatch.setattr(pipeline, "MentionIndex", counting)
    repo = copy_shop(tmp_path / "shop")
    settings, store = _open("kuzu", repo)
    retry = repo / "shop" / "payments" / "retry.py"
    try:
        index_repository(settings, store, embedder)
        assert built == [1]
        text = retry.read_text()
        retry.write_text(
            text.replace("    attempts = payment.attempt_count\n", "    attempts = payment.attempt_count  # so far\n")
        )
        assert retry.read_text() != text
        assert index_repository(settings, store, embedder).mode == "incremental"
        assert built == [1]
        assert any("schedule_payment_retry" in str(row) for row in dump(store)["MENTIONS"])
        retry.write_text(retry.read_text().replace("schedule_payment_retry", "schedule_retry"))
        assert index_repository(settings, store, embedder).mode == "incremental"
        assert built == [1, 1]
        got = dump(store)
    finally:
        store.close()
    assert not any("schedule_payment_retry" in str(row) for row in got["MENTIONS"])
    diff = differences(got, _full_rebuild(repo, embedder))
    assert not diff, "\n".join(diff)


HOOKED_SHOP = {
    "payments/__init__.py": "",
    "payments/notify.py": (
        "class ReceiptMailer:\n"
        "    def handle(self, event):\n"
        "        return ('receipt', event)\n\n\n"
        "class AuditLog:\n"
        "    def handle(self, event):\n"
        "        return ('audit', event)\n"
    ),
    "payments/hooks.py": (
        "class PaymentHooks:\n"
        "    def __init__(self):\n"
        "        self.listeners = []\n\n"
        "    def fire(self, event):\n"
        "        for listener in self.listeners:\n"
        "            listener.handle(event)\n"
    ),
    "payments/setup.py": (
        "from payments.hooks import PaymentHooks\n"
        "from payments.notify import AuditLog, ReceiptMailer\n\n\n"
        "def install_hooks():\n"
        "    hooks = PaymentHooks()\n"
        "    hooks.listeners.append(ReceiptMailer())\n"
        "    return hooks\n"
    ),
    "payments/checkout.py": (
        "from payments.setup import install_hooks\n\n\n"
        "def checkout(order_id):\n"
        "    hooks = install_hooks()\n"
        "    hooks.fire(order_id)\n"
        "    return order_id\n"
    ),
}


def test_a_body_edit_the_name_resolver_cannot_see_costs_no_caller(tmp_path: Path, embedder: Embedder) -> None:
    """With the name resolver, a body edit that keeps what the resolver reads of the body (here a
    logging line) re-resolves no other file: checkout.py calls install_hooks but cannot resolve
    differently (Django's one-line edit of ``capfirst`` re-resolved its 11 callers' files)."""
    logged = "    print(hooks)\n    return hooks\n"
    summary, diff = _edit_and_compare(
        tmp_path, embedder, HOOKED_SHOP, "payments/setup.py", "    return hooks\n", logged
    )
    assert summary.affected == 0
    assert not diff, "\n".join(diff)


def test_a_body_edit_that_changes_what_a_container_holds_moves_the_dispatch(tmp_path: Path, embedder: Embedder) -> None:
    """``fire`` loops over ``self.listeners`` and calls ``handle`` on each: the name resolver takes the
    classes appended to ``listeners`` anywhere (install_hooks, another file). Appending an AuditLog
    instead is a body edit of install_hooks only, yet fire's edge must move from
    ReceiptMailer.handle to AuditLog.handle, as a full rebuild has it."""
    summary, diff = _edit_and_compare(
        tmp_path, embedder, HOOKED_SHOP, "payments/setup.py", "append(ReceiptMailer())", "append(AuditLog())"
    )
    assert not diff, "\n".join(diff)


def test_a_line_added_inside_a_function_leaves_the_module_s_own_code_as_it_was() -> None:
    """A module's text marks each definition with its lines (``# ... def charge_card(...) (lines 4-6)``):
    a line added inside the first function moves every marker below it, but the module's own code
    (imports, constants, the order of its definitions) is the same, so neither view of a body an
    incremental run compares counts the module as changed (on Django's ``capfirst`` it did, and every
    file's edges were scanned for one into django/utils/text.py)."""
    from cg.ingest.freshness import texts
    from cg.ingest.resolve.python import body_inputs
    from tests.ingest.helpers import PAYMENTS, extract_source

    before = extract_source("payments/cards.py", PAYMENTS)
    after = extract_source(
        "payments/cards.py",
        PAYMENTS.replace("    return amount_cents < 100_000\n", "    # reviewed\n    return amount_cents < 100_000\n"),
    )
    module = "payments/cards.py::<module>"
    moved = next(s for s in after.symbols if s.id == module).text
    assert moved != next(s for s in before.symbols if s.id == module).text  # the markers did move
    assert texts(after)[module] == texts(before)[module]
    assert body_inputs(after)[module] == body_inputs(before)[module]
    assert texts(after)["payments/cards.py::charge_card"] != texts(before)["payments/cards.py::charge_card"]


def test_an_incremental_run_reads_only_the_files_whose_stat_changed(tmp_path: Path, embedder: Embedder) -> None:
    """A run after no change reads no file the index holds (each one's stat is the one the last run
    saw); after an edit it reads the edited file alone, and the graph still equals a full rebuild."""
    repo = copy_shop(tmp_path / "shop")
    settings, store = _open("kuzu", repo)
    read: list[str] = []
    real_read = walk_module._read

    def counting(full, info, rel, report, max_bytes):
        read.append(rel)
        return real_read(full, info, rel, report, max_bytes)

    try:
        assert _settled_run(settings, store, embedder).mode == "full"
        with mock.patch.object(walk_module, "_read", counting):
            again = _settled_run(settings, store, embedder)
            assert again.mode == "incremental" and again.changed == 0
            assert read == []
            retry = repo / "shop" / "payments" / "retry.py"
            retry.write_text(retry.read_text() + "\n\ndef backoff_cap() -> int:\n    return 3600\n")
            edited = _settled_run(settings, store, embedder)
        assert edited.changed == 1 and read == ["shop/payments/retry.py"]
        got = dump(store)
    finally:
        store.close()
    assert not differences(got, _full_rebuild(repo, embedder))
