"""jedi resolution on examples/shop: edges only jedi gets right, the fallback when a file runs over its
time budget, and the PyCG-style `cg callgraph` output."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import pytest

from cg.config import load_settings
from cg.ingest.pipeline import IndexSummary, extract_repository, resolve_extractions
from tests.conftest import cg_command

from .helpers import SHOP


def calls(resolver: str, **overrides):
    settings = load_settings(SHOP, resolver=resolver, **overrides)
    summary = IndexSummary(repo=str(SHOP), backend="none")
    extractions, _ = extract_repository(settings, summary=summary)
    edges, _ = resolve_extractions(settings, extractions, summary=summary)
    return {(e.src, e.dst): e for e in edges if e.type == "CALLS"}, summary


def tree_calls(repo) -> list:
    """The CALLS edges of a small tree, jedi in one worker (in process for so few sites)."""
    settings = load_settings(repo, resolver="jedi", jedi_workers=1)
    extractions, _ = extract_repository(settings)
    edges, _ = resolve_extractions(settings, extractions)
    return [e for e in edges if e.type == "CALLS"]


@pytest.fixture(scope="module")
def jedi_calls():
    return calls("jedi")[0]


@pytest.fixture(scope="module")
def name_calls():
    return calls("name")[0]


DELETED = "shop/webhooks/stripe_webhooks.py::WebhookHandler.handle_subscription_deleted"


def test_same_method_name_on_two_classes(jedi_calls, name_calls):
    # `subscription = self.subscriptions.get(...)` with `Dict[str, Subscription]`: only jedi knows the type
    edge = jedi_calls[(DELETED, "shop/billing/subscriptions.py::Subscription.cancel")]
    assert edge.resolved_by == "jedi" and edge.confidence == 1.0
    assert (DELETED, "shop/queue.py::JobQueue.cancel") not in jedi_calls  # the other `cancel`
    # the name resolver guesses neither
    assert not any(dst.endswith(".cancel") and dst.startswith("shop/") for (src, dst) in name_calls if src == DELETED)


def test_aliased_module_import(jedi_calls):
    # `from . import invoices as inv` ... `inv.create_invoice(...)`
    edge = jedi_calls[("shop/billing/subscriptions.py::Subscription.renew", "shop/billing/invoices.py::create_invoice")]
    assert edge.resolved_by == "jedi" and edge.line == 77


def test_super_call_reaches_the_base_method(jedi_calls):
    edge = jedi_calls[("shop/errors.py::CardDeclinedError.__init__", "shop/errors.py::PaymentError.__init__")]
    assert edge.resolved_by == "jedi"
    assert (
        "shop/errors.py::CardDeclinedError.__init__",
        "shop/errors.py::CardDeclinedError.__init__",
    ) not in jedi_calls


def test_property_reads_and_externals_by_full_name(jedi_calls):
    assert (
        "shop/billing/invoices.py::calculate_total",
        "shop/billing/invoices.py::Invoice.subtotal_cents",
    ) in jedi_calls
    delay = "shop/payments/retry.py::RetryPolicy.delay_for"
    assert jedi_calls[(delay, "random.Random.uniform")].dst_label == "External"  # self.rng: random.Random
    assert jedi_calls[(delay, "builtins.max")].resolved_by == "jedi"


def test_parameter_on_the_def_line_is_not_the_function(jedi_calls):
    # `def cancel(self, matches)`: calling `matches(...)` must not link JobQueue.cancel to itself
    assert ("shop/queue.py::JobQueue.cancel", "shop/queue.py::JobQueue.cancel") not in jedi_calls


def test_jedi_resolves_more_than_names_alone():
    jedi_edges, jedi_summary = calls("jedi")
    name_edges, _ = calls("name")
    unresolved = [e for e in jedi_edges.values() if e.resolved_by == "unresolved"]
    assert len(unresolved) < len([e for e in name_edges.values() if e.resolved_by == "unresolved"]) / 2
    assert jedi_summary.jedi_answered > 0.9 * jedi_summary.jedi_sites
    assert jedi_summary.jedi_workers >= 1 and not jedi_summary.jedi_failed


def test_over_budget_files_fall_back_to_names_and_are_reported():
    edges, summary = calls("jedi", jedi_budget=0.000001)
    assert summary.jedi_timed_out  # every file ran out of time at once
    edge = edges[
        (
            "shop/webhooks/stripe_webhooks.py::WebhookHandler.handle_invoice_payment_failed",
            "shop/payments/retry.py::schedule_payment_retry",
        )
    ]
    assert edge.resolved_by == "import"  # the name resolver's answer stands in


def test_callgraph_command_in_pycg_format():
    graph = json.loads(cg_command("callgraph", str(SHOP)).stdout)
    assert (
        "shop.payments.retry.schedule_payment_retry"
        in graph["shop.webhooks.stripe_webhooks.WebhookHandler.handle_invoice_payment_failed"]
    )
    # instantiation is the constructor, never the class
    create_app = graph["shop.app.create_app"]
    assert "shop.queue.JobQueue.__init__" in create_app and "shop.queue.JobQueue" not in create_app
    assert graph["shop.payments.retry.RetryPolicy.delay_for"] == [
        "<builtin>.max",
        "random.Random.uniform",
        "shop.payments.retry.compute_backoff",
    ]
    assert graph["shop.payments.retry.compute_backoff"] == ["<builtin>.ValueError", "<builtin>.min"]
    internal = json.loads(cg_command("callgraph", str(SHOP), "--no-external").stdout)
    assert internal["shop.payments.retry.RetryPolicy.delay_for"] == ["shop.payments.retry.compute_backoff"]


def test_non_ascii_text_before_a_call_does_not_cost_the_answer(tmp_path):
    # tree-sitter columns are bytes, jedi's are characters
    (tmp_path / "greetings.py").write_text(
        "def shout(text):\n    return text.upper()\n\n"
        'def greet():\n    label = "おはようございます"; return shout(label)\n',
        encoding="utf-8",
    )
    edge = next(e for e in tree_calls(tmp_path) if e.src.endswith("::greet") and e.dst.endswith("::shout"))
    assert edge.resolved_by == "jedi"


def test_a_name_defined_on_two_branches_reaches_both_definitions(tmp_path):
    # `batched` is a def on one branch and an alias of `_batched_fallback` on the other: a call may run either
    (tmp_path / "batching.py").write_text(
        "import os\n\n\n"
        "def _batched_fallback(rows, size):\n    return [rows[i : i + size] for i in range(0, len(rows), size)]\n\n\n"
        "if os.environ.get('BATCH_WITH_ZIP'):\n\n"
        "    def batched(rows, size):\n        return list(zip(*[iter(rows)] * size))\n\n"
        "else:\n    batched = _batched_fallback\n\n\n"
        "def invoice_pages(invoices):\n    return batched(invoices, 50)\n",
        encoding="utf-8",
    )
    called = {e.dst.split("::")[1] for e in tree_calls(tmp_path) if e.src.endswith("::invoice_pages")}
    assert called == {"batched", "_batched_fallback"}


def test_sharing_the_answer_of_a_certain_name_changes_no_edge(monkeypatch):
    """jedi asked once per certain name and expression (jedi_resolver.shared_sites) gives the same CALLS
    edges, targets, lines, resolvers and confidences as jedi asked at every call."""
    from cg.ingest.resolve import jedi_resolver

    # one worker: with two, which worker's caches see which file first is a race, and jedi's answers at
    # its inference limits follow that order whatever is shared
    shared, summary = calls("jedi", jedi_workers=1)
    monkeypatch.setattr(jedi_resolver, "shared_sites", lambda ex: {})
    every, every_summary = calls("jedi", jedi_workers=1)
    assert summary.jedi_sites < every_summary.jedi_sites
    assert {k: (e.line, e.resolved_by, e.confidence) for k, e in shared.items()} == {
        k: (e.line, e.resolved_by, e.confidence) for k, e in every.items()
    }


def test_a_module_rewritten_with_an_older_mtime_is_read_anew_not_from_jedis_cache(tmp_path):
    """parso trusts a cached parse of an imported module while the file is not newer than the pickle:
    content copied in with its old mtime (`cp -p`, `tar x`, `rsync -a`) kept jedi on the old tree, and a
    call into it mapped to lines that no longer hold the definition (the edge became a name guess or
    vanished). A cached tree is used only when its lines are the file's lines."""
    repo = tmp_path / "billing"
    repo.mkdir()
    (repo / "fees.py").write_text("def card_fee(cents):\n    return cents * 3 // 100\n")
    (repo / "checkout.py").write_text("from fees import card_fee\n\n\ndef total(cents):\n    return card_fee(cents)\n")

    def card_fee_lines():
        return {(e.dst, e.resolved_by) for e in tree_calls(repo) if e.src.endswith("::total")}

    assert card_fee_lines() == {("fees.py::card_fee", "jedi")}
    old = (repo / "fees.py").stat().st_mtime - 3600
    (repo / "fees.py").write_text(
        '"""Fees."""\n\nRATE = 3\n\n\ndef sepa_fee(cents):\n    return 35\n\n\ndef card_fee(cents):\n'
        "    return cents * RATE // 100\n"
    )
    os.utime(repo / "fees.py", (old, old))
    assert card_fee_lines() == {("fees.py::card_fee", "jedi")}


def test_a_truncated_cache_entry_left_by_a_killed_worker_costs_no_answer(tmp_path):
    """parso pickled each parsed module straight into its cache file: a worker killed mid-write (Ctrl-C,
    SIGKILL, out of memory) left a truncated pickle, and every later run lost jedi's answer at each call
    into that module (EOFError inside jedi, one site at a time). Entries are now written whole or not
    at all, and one that cannot be read is parsed anew and replaced."""
    import jedi
    import parso.cache

    repo = tmp_path / "billing"
    repo.mkdir()
    (repo / "fees.py").write_text("def card_fee(cents):\n    return cents * 3 // 100\n")
    (repo / "checkout.py").write_text("from fees import card_fee\n\n\ndef total(cents):\n    return card_fee(cents)\n")
    assert {e.resolved_by for e in tree_calls(repo) if e.src.endswith("::total")} == {"jedi"}
    fees = (repo / "fees.py").resolve()
    grammar = next(g for g, modules in parso.cache.parser_cache.items() if fees in modules)
    entry = Path(parso.cache._get_hashed_path(grammar, fees, cache_path=Path(jedi.settings.cache_directory)))
    assert entry.is_file() and not list(entry.parent.glob(".cg-*.tmp"))  # no temporary file left behind
    entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])  # as a kill mid-write left it
    parso.cache.parser_cache.clear()  # a new run: only the disk cache is left
    assert {e.resolved_by for e in tree_calls(repo) if e.src.endswith("::total")} == {"jedi"}
    with entry.open("rb") as whole:  # replaced by a readable entry
        assert pickle.load(whole).lines  # noqa: S301 - jedi's own cache, written by this test's run


NAME_LOOKUP_SOURCE = '''\
"""Settlement batches: a module with the shapes a position lookup must get right."""
import decimal as dec
from typing import (
    Iterable,
)


class Batch(dict):
    fee = dec.Decimal("0.25")

    def total(self, rows: Iterable[int]) -> int:
        label = f"batch {self.get('id')!r}: {len(rows)} rows"
        return sum(r * 2 for r in rows if r) + len(label)

    @property
    def payee(self):return self["payee"]


def settle(batch: Batch, *args, **kwargs):
    """Multi-line
    docstring."""
    value = batch.total([1, 2, 3]);other = (lambda x: x.payee)(batch)
    if value > 10 and not other: return settle(batch)
    broken = (value +
'''


def test_the_pruned_name_lookup_finds_what_parsos_full_search_finds():
    """jedi finds the name at each question's position with parso's ``get_name_of_position``, which
    searches the whole module tree depth first: a big file's every question cost a walk of its tree
    (2.3M node visits for sqlparse's 2,125 questions). The replacement descends only into the children
    whose span holds the position. It must give the same leaf at every position: each leaf's start, end
    and middle, the whitespace between leaves, in real modules and in one that does not parse."""
    import parso

    from cg.ingest.resolve import jedi_resolver

    jedi_resolver.install_name_lookup()

    sources = [NAME_LOOKUP_SOURCE] + [
        Path(jedi_resolver.__file__).read_text("utf-8"),
        (Path(__file__).parents[2] / "examples" / "shop" / "shop" / "webhooks" / "stripe_webhooks.py").read_text(
            "utf-8"
        ),
    ]
    full_search = jedi_resolver.PARSO_NAME_OF_POSITION
    assert full_search is not None and full_search.__module__ == "parso.python.tree"
    checked = 0
    for source in sources:
        module = parso.parse(source)
        positions = set()
        leaf = module.get_first_leaf()
        while leaf is not None:
            (line, column), end = leaf.start_pos, leaf.end_pos
            positions |= {(line, column), end, (line, column + 1), (line, max(0, column - 1)), (end[0], end[1] + 1)}
            leaf = leaf.get_next_leaf()
        positions |= {(0, 0), (1, 0), (10_000, 0)}
        for position in sorted(positions):
            assert jedi_resolver.name_of_position(module, position) is full_search(module, position), position
            checked += 1
    assert checked > 5_000


def test_a_file_ruled_out_by_its_bytes_holds_no_match_in_its_text():
    """jedi's call-site search decodes every project file to look for a function's name; cg rules a
    file out from its bytes first (jedi_resolver.cannot_hold). That must never rule out a file whose
    decoded text matches: checked for every identifier of real modules against every module, and for a
    latin-1 and a Shift JIS module with a coding declaration, non-ASCII names, invalid UTF-8 and names that touch
    non-ASCII letters, where the bytes cannot decide and the text must be read."""
    import re

    from parso.utils import python_bytes_to_unicode

    from cg.ingest.resolve import jedi_resolver

    shop = Path(__file__).parents[2] / "examples" / "shop" / "shop"
    files = [p.read_bytes() for p in sorted(shop.rglob("*.py"))[:12]]
    files += [
        "# -*- coding: latin-1 -*-\ndef r\u00e9gler(facture):\n    return facture\n".encode("latin-1"),
        # the middle dot is no word character, but its second byte in Shift JIS is "E", which is
        "# coding: shift_jis\nlabel = '\u30fbtotal'\n".encode("shift_jis"),
        "def r\u00e9gler(facture):\n    return \u00e9facture + facture\u00e9\n".encode(),
        b"def settle(invoice):\n    return invoice  # \xff\xfe not UTF-8\n",
        "montant = 3\nr\u00e9gler = montant\n\u00e0montant = 1\n".encode(),
    ]
    names = set()
    for raw in files:
        names |= set(re.findall(r"\w+", python_bytes_to_unicode(raw, errors="replace")))
    names |= {"payment_retry", "r\u00e9gler", "facture", "montant", "total"}
    ruled_out = 0
    for raw in files:
        text = python_bytes_to_unicode(raw, errors="replace")
        for name in sorted(names):
            pattern = r"\b" + re.escape(name) + r"\b"
            if jedi_resolver.cannot_hold(raw, pattern):
                assert re.search(pattern, text) is None, (name, text[:60])
                ruled_out += 1
    assert ruled_out > len(files) * len(names) // 2  # and it does rule out most pairs
