"""The embedded store rewrites a grown generation compactly: the same graph and answers as a run that
never rewrites, a bounded file over edits, the full-text index kept current through later updates
(updating an indexed column after a rewrite is what once crashed Kùzu), and a rewrite that fails keeps
the run's own generation."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from cg.api import settings_for
from cg.graph import kuzu_store
from cg.graph.backends import open_store
from cg.lexical import analyze_query
from tests.conftest import cg_command, copy_shop
from tests.graphdump import differences
from tests.ingest.crashes import graph_of

EDITED = Path("shop/payments/retry.py")
ANCHOR = "def schedule_payment_retry("


def _index(repo: Path, growth: str) -> str:
    env = {"CG_RESOLVER": "name", "CG_KUZU_COMPACT_GROWTH": growth}
    return cg_command("index", str(repo), env=env).stdout


def _generation(repo: Path) -> Path:
    root = repo / ".cg" / "kuzu"
    return root / (root / "CURRENT").read_text().split()[0]


def _meta(repo: Path, key: str) -> str | None:
    with open_store(settings_for(repo, "kuzu"), read_only=True) as store:
        return store.get_meta(key)


def _edit(repo: Path, number: int) -> None:
    """One statement more in a function body, with a name only this edit uses (after the signature,
    which runs over several lines: the file still parses)."""
    path = repo / EDITED
    text = path.read_text()
    head, rest = text.split(ANCHOR, 1)
    signature, body = rest.split(":\n", 1)
    path.write_text(f"{head}{ANCHOR}{signature}:\n    reconciliation_marker_{number} = {number}\n{body}")
    compile(path.read_text(), str(path), "exec")


def test_rewritten_generations_hold_the_same_graph_as_never_rewritten_ones(tmp_path):
    rewritten, never = copy_shop(tmp_path / "a" / "shop"), copy_shop(tmp_path / "b" / "shop")
    _index(rewritten, "1.1")
    _index(never, "0")
    assert _meta(rewritten, "compact_bytes") is not None and _meta(never, "compact_bytes") is None
    sizes = []
    for number in range(1, 5):
        for repo, growth in ((rewritten, "1.1"), (never, "0")):
            _edit(repo, number)
            assert _index(repo, growth).startswith("updated"), number
        assert not (diff := differences(graph_of(rewritten, "kuzu"), graph_of(never, "kuzu"))), "\n".join(diff)
        sizes.append((_generation(rewritten) / "graph.kuzu").stat().st_size)
        # the full-text index follows every update, the ones after a rewrite included
        with open_store(settings_for(rewritten, "kuzu"), read_only=True) as store:
            hits = [doc for doc, _ in store.fulltext(analyze_query(f"reconciliation_marker_{number}"), 5)]
        assert "shop/payments/retry.py::schedule_payment_retry" in hits, hits
        assert not (_generation(rewritten) / "export").exists()
        assert len([p for p in (rewritten / ".cg" / "kuzu").iterdir() if p.is_dir()]) == 1
    never_size = (_generation(never) / "graph.kuzu").stat().st_size
    assert max(sizes) < never_size, (sizes, never_size)


def test_a_rewrite_that_fails_keeps_the_runs_generation(tmp_path, monkeypatch, caplog):
    repo = copy_shop(tmp_path / "shop")
    _index(repo, "0")
    before = graph_of(repo, "kuzu")

    def broken(export: Path) -> list[str]:
        raise OSError(f"no space left on device: {export}")

    monkeypatch.setattr(kuzu_store, "_copy_statements", broken)
    settings = settings_for(repo, "kuzu")
    store = open_store(settings)
    try:
        with caplog.at_level(logging.WARNING, logger="cg"), store.run(full=False, dimension=384):
            pass  # nothing written: the run ends, and its rewrite fails
    finally:
        store.close()
    assert "could not rewrite the index compactly (no space left on device" in caplog.text
    assert not (diff := differences(graph_of(repo, "kuzu"), before)), "\n".join(diff)
    assert len([p for p in (repo / ".cg" / "kuzu").iterdir() if p.is_dir()]) == 1
    assert not (_generation(repo) / "export").exists()


def test_a_compact_growth_that_would_rewrite_every_run_is_refused(tmp_path):
    from cg.config import ConfigError

    with pytest.raises(ConfigError, match="kuzu_compact_growth 1 would rewrite the index on every run"):
        settings_for(tmp_path, "kuzu", kuzu_compact_growth=1.0)


def _ledger(root: Path, regions: int) -> Path:
    """A repository of settlement modules, big enough that a Kùzu column of its definitions spans many
    pages: ``regions`` files of twenty functions each, every one with a docstring, a message literal and
    a call into the region before."""
    package = root / "ledger"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    for n in range(regions):
        previous = max(n - 1, 0)
        parts = [f'"""Ledger postings for region {n}."""\n\nfrom ledger.region_{previous} import settle_{previous}_0\n']
        for k in range(20):
            parts.append(
                f"""
def settle_{n}_{k}(invoices, currency="EUR", retries=3):
    \"\"\"Settle a batch of invoices for region {n}, step {k}: sum the open amounts, apply the credit
    notes, and post one ledger entry per customer account; retried on a declined card.\"\"\"
    total = 0
    for invoice in invoices:
        if invoice.status == "open" and invoice.currency == currency:
            total += invoice.amount_due - invoice.credit_applied
    message = "settled region {n} batch {k}: %d invoices, %s %.2f" % (len(invoices), currency, total)
    if total < 0:
        raise ValueError("negative settlement total in region {n} batch {k}")
    return settle_{previous}_0(invoices, currency, retries - 1) if retries else message
"""
            )
        (package / f"region_{n}.py").write_text("".join(parts))
    return root


def test_a_one_file_edit_adds_pages_for_what_changed_not_for_every_definition(tmp_path):
    """Kùzu rewrites a string column's node group for one updated row (and a full-text index with it),
    and never gives the old pages back: updated in place, one edited function of 4,000 grew this index
    by 85% (Django's by 110%, so that every edit paid the compacting rewrite). Written anew, the file's
    definitions cost about their own pages."""
    repo = _ledger(tmp_path / "ledger-repo", 200)
    env = {"CG_RESOLVER": "name", "CG_KUZU_COMPACT_GROWTH": "0", "CG_HISTORY_COMMITS": "0"}
    cg_command("index", "--embed", "later", str(repo), env=env)
    before = (_generation(repo) / "graph.kuzu").stat().st_size
    edited = repo / "ledger" / "region_7.py"
    edited.write_text(edited.read_text().replace("declined card", "declined card or a timeout"))
    assert cg_command("index", "--embed", "later", str(repo), env=env).stdout.startswith("updated kuzu: 1 changed")
    after = (_generation(repo) / "graph.kuzu").stat().st_size
    assert after - before < 0.35 * before, (before, after)
    with open_store(settings_for(repo, "kuzu"), read_only=True) as store:  # the edit is what the index says
        hits = [doc for doc, _ in store.fulltext(analyze_query("declined card or a timeout region 7"), 3)]
        callers = {row.src for row in store.calls(["ledger/region_7.py::settle_7_0"], "in")}
    assert hits and hits[0].startswith("ledger/region_7.py::settle_7_"), hits
    assert "ledger/region_8.py::settle_8_0" in callers, callers  # an edge from another file, kept
