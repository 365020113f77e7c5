"""The pure parts of impact: fixture parameters read from stored signatures."""

from __future__ import annotations

from cg.queries.impact import parameters


def test_parameters_of_a_stored_signature():
    assert parameters("def test_invoice_paid_marks_invoice_paid(app, subscription)") == ["app", "subscription"]
    assert parameters("async def test_stream(self, client: AsyncClient, *, timeout=5.0)") == ["client", "timeout"]
    assert parameters("def broken(:") == []
    assert parameters("") == []
