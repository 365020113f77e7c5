"""DECORATES through the whole pipeline, on both stores: a decorator in one file, the functions it wraps in
another; the edge is laid once per decoration however the two files change, and an incremental index equals
a full rebuild (duplicates counted, which the set-based graph dump would not see)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cg.config import load_settings
from cg.embed import Embedder, embedder_for
from cg.ingest.pipeline import index_repository
from tests.graphdump import differences, dump
from tests.ingest.test_incremental import _full_rebuild, _open
from tests.neo4j_env import BACKENDS

RETRY = '''"""Retries for card charges the network declined."""
import functools


def retry_on_decline(attempts=3):
    """Run the charge again, up to ``attempts`` times, while the card is declined."""

    def decorate(charge):
        @functools.wraps(charge)
        def wrapper(*args, **kwargs):
            for _ in range(attempts):
                receipt = charge(*args, **kwargs)
                if receipt is not None:
                    return receipt
            return None

        return wrapper

    return decorate


def audited(handler):
    """Log every call of a payment handler."""
    return handler
'''

SERVICE = '''"""Charging invoices and refunding payments."""
from shop.payments.retry import audited, retry_on_decline


@retry_on_decline(attempts=5)
@audited
def charge_invoice(invoice):
    return invoice.total_cents


class PaymentService:
    @audited
    def refund(self, payment):
        return payment.amount_cents
'''


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return embedder_for(load_settings(Path.cwd()))


def _decorates(store) -> list[tuple[str, str, int]]:
    rows = store._read("MATCH (a:Symbol {repo: $repo})-[r:DECORATES]->(b:Symbol) RETURN a.id, b.id, r.line")
    return sorted((r[0], r[1], r[2]) for r in rows)


def _calls(store) -> set[tuple[str, str]]:
    rows = store._read("MATCH (a:Symbol {repo: $repo})-[:CALLS]->(b:Symbol) RETURN a.id, b.id")
    return {(r[0], r[1]) for r in rows}


@pytest.mark.parametrize("backend", BACKENDS)
def test_decorates_edges_survive_edits_of_either_file(backend: str, tmp_path: Path, embedder: Embedder) -> None:
    repo = tmp_path / "shop"
    (repo / "shop" / "payments").mkdir(parents=True)
    for package in ("shop", "shop/payments"):
        (repo / package / "__init__.py").write_text("")
    retry, service = repo / "shop/payments/retry.py", repo / "shop/payments/service.py"
    retry.write_text(RETRY)
    service.write_text(SERVICE)
    r, s = "shop/payments/retry.py::", "shop/payments/service.py::"
    wanted = [
        (f"{r}audited", f"{s}PaymentService.refund", 12),
        (f"{r}audited", f"{s}charge_invoice", 6),
        (f"{r}retry_on_decline", f"{s}charge_invoice", 5),
    ]
    settings, store = _open(backend, repo)
    try:
        if backend == "neo4j":
            store.reset()
        summary = index_repository(settings, store, embedder)
        assert summary.mode == "full" and summary.edges["DECORATES"] == 3
        assert _decorates(store) == wanted
        calls = _calls(store)
        assert {(f"{s}<module>", f"{r}retry_on_decline"), (f"{s}<module>", f"{r}audited")} <= calls
        assert (f"{s}PaymentService", f"{r}audited") in calls  # the class body runs `@audited def refund`
        assert not any(src == f"{s}charge_invoice" for src, _ in calls)  # the function does not call them

        steps = [
            (service, SERVICE.replace("return invoice.total_cents", "return invoice.total_cents - invoice.discount")),
            (retry, RETRY + "\n\ndef declined(receipt):\n    return receipt is None\n"),
            (service, SERVICE.replace("    @audited\n    def refund", "    def refund")),
            (retry, RETRY.split("\n\ndef audited")[0] + "\n"),
        ]
        expected = [wanted, wanted, wanted[1:], wanted[2:]]
        for (path, text), want in zip(steps, expected, strict=True):
            path.write_text(text)
            summary = index_repository(settings, store, embedder)
            assert summary.mode == "incremental"
            assert _decorates(store) == want, path.name
            diff = differences(dump(store), _full_rebuild(repo, embedder))
            assert not diff, "\n".join(diff)
    finally:
        store.close()
