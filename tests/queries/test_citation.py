"""Citations read ``[path:start-end]`` with the end never before the start."""

from __future__ import annotations

from cg.queries.lookup import citation
from cg.queries.sources import _citation


def test_a_definition_is_cited_by_its_lines():
    node = {"path": "shop/payments/retry.py", "start_line": 86, "end_line": 117}
    assert citation(node) == "[shop/payments/retry.py:86-117]"
    assert citation({"path": None, "qualname": "stripe.Charge.create"}) == "[external]"


def test_an_empty_or_one_line_file_never_reads_an_end_before_its_start():
    # as an index written before the one-line JSON fix stored it, and an empty file's module
    assert citation({"path": "deploy/service-account.json", "start_line": 1, "end_line": 0}) == (
        "[deploy/service-account.json:1-1]"
    )
    assert citation({"path": "shop/__init__.py", "start_line": 1, "end_line": None}) == "[shop/__init__.py:1-1]"
    section = {"path": "docs/payment-retries.md", "start_line": 12, "end_line": 11}
    assert _citation("doc", section) == "[docs/payment-retries.md:12-12]"
