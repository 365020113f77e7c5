from __future__ import annotations

from pathlib import Path

import pytest

from cg.graph.kuzu_store import KuzuStore
from tests.neo4j_env import BACKENDS, neo4j_settings


@pytest.fixture(params=BACKENDS)
def store_factory(request, tmp_path: Path):
    """Returns open(read_only=False) for a fresh, empty store of each backend."""
    opened = []

    def open_store(read_only: bool = False):
        if request.param == "kuzu":
            for s in opened:
                s.close()
            opened.clear()
            store = KuzuStore(tmp_path / "graph.kuzu", read_only=read_only)
        else:
            from cg.graph.neo4j_store import Neo4jStore

            store = Neo4jStore(neo4j_settings(tmp_path), read_only=read_only)
            if not opened:
                store.reset()  # the server is shared by the whole run: start this test's repository empty
        opened.append(store)
        return store

    yield open_store
    for s in opened:
        s.close()
    if request.param == "neo4j":  # leave the shared server as it was: this test's repository removed
        from cg.graph.neo4j_store import Neo4jStore

        with Neo4jStore(neo4j_settings(tmp_path)) as cleaner:
            cleaner.reset()
