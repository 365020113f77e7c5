from __future__ import annotations

from pathlib import Path

import pytest

from cg.graph.kuzu_store import KuzuStore

BACKENDS = ["kuzu"]


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
        opened.append(store)
        return store

    yield open_store
    for s in opened:
        s.close()
