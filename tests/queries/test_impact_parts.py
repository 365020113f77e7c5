"""The pure parts of impact: fixture parameters read from stored signatures."""

from __future__ import annotations

from cg.queries.impact import parameters


def test_parameters_of_a_stored_signature():
    assert parameters("def test_invoice_paid_marks_invoice_paid(app, subscription)") == ["app", "subscription"]
    assert parameters("async def test_stream(self, client: AsyncClient, *, timeout=5.0)") == ["client", "timeout"]
    assert parameters("def broken(:") == []
    assert parameters("") == []


def test_test_functions_are_read_only_once_a_fixture_is_reached(indexed_shop):
    """Matching fixtures to the tests that take them reads every test function's signature: on a big
    unittest-style suite (Django's) that was most of an impact answer's time, though no fixture was
    ever reached. compute_backoff's tests call it directly: no read; create_app is reached through
    the ``app`` fixture: one read, and the tests found through it."""
    from cg.api import open_index
    from cg.queries.impact import impact

    repo, _ = indexed_shop
    with open_index(repo) as index:
        store = index.store
        reads: list[int] = []
        real = store.test_functions

        def counting():
            reads.append(1)
            return real()

        store.test_functions = counting
        try:
            direct = impact(store, index.lookup("compute_backoff"))
            assert direct.tests and reads == []
            through = impact(store, index.lookup("create_app"))
            assert {a.resolved_by for a in through.tests} >= {"fixture"} and reads == [1]
        finally:
            del store.test_functions
