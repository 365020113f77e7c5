"""The indexed shop copy opened for queries, shared by the search, explain and ranking tests."""

from __future__ import annotations

import pytest

from cg.config import load_settings
from cg.embed import embedder_for
from cg.graph.backends import open_store


@pytest.fixture(scope="module")
def ctx(indexed_shop):
    """(read-only store, embedder) over the indexed shop copy."""
    repo, _ = indexed_shop
    settings = load_settings(repo)
    store = open_store(settings, read_only=True)
    yield store, embedder_for(settings)
    store.close()
