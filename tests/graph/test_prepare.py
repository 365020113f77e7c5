"""``GraphWriter.prepare``: a run's start made ready ahead of it (on Kùzu, the run's generation and its
schema; for an incremental run, the current generation copied in a thread of its own), so it overlaps
parsing and resolving and the precise pass's indexers (cg/ingest/pipeline.py). The run that follows
must be exactly the run it would have been, and a prepared run that never comes, or whose copy
failed, must leave the index as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from cg.graph.generations import Generations
from cg.graph.kuzu_store import KuzuIndexStore, KuzuStore
from cg.graph.store import FileWrite

KEY = "payments"


def _invoice_file(tag: str) -> FileWrite:
    from cg.model import FileRecord, Symbol

    path = "billing/invoices.py"
    record = FileRecord(path=path, language="python", kind="source", blob_sha=tag, loc=3, module="billing.invoices")
    symbol = Symbol(
        id=f"{path}::settle_invoice",
        name="settle_invoice",
        qualname="settle_invoice",
        kind="function",
        path=path,
        start_line=1,
        end_line=3,
        signature="def settle_invoice(invoice)",
        docstring=f"Settle an invoice ({tag}).",
        text="def settle_invoice(invoice):\n    return invoice.charge()\n",
        parent_id="",
    )
    return FileWrite(file=record, symbols=[symbol], embeddings=None, new=True)


def _generation_dirs(index: Path) -> list[str]:
    return sorted(p.name for p in (index / "kuzu").iterdir() if p.is_dir())


def _docstring(store: KuzuStore) -> str:
    return store._read("MATCH (s:Symbol) RETURN s.docstring")[0][0]


def _symbols(store: KuzuStore) -> int:
    return store._read("MATCH (s:Symbol) RETURN count(s)")[0][0]


@pytest.fixture
def index(tmp_path: Path) -> Path:
    """An index with one complete generation, written by a run that was not prepared."""
    index = tmp_path / "repo" / ".cg"
    (index / "kuzu").mkdir(parents=True)  # as cg/graph/backends.py makes it
    with KuzuIndexStore(Generations(index), KEY) as store, store.run(full=True, dimension=8):
        store.write_file(_invoice_file("first"))
    return index


def test_a_prepared_full_run_writes_what_an_unprepared_one_writes(index: Path, monkeypatch):
    with KuzuIndexStore(Generations(index), KEY) as store:
        store.prepare(full=True, dimension=8)
        monkeypatch.setattr(store, "_start", lambda *a: pytest.fail("the run started over what was prepared"))
        with store.run(full=True, dimension=8):
            store.write_file(_invoice_file("second"))
        assert _docstring(store) == "Settle an invoice (second)."
        assert store.get_meta("dimension") == "8"
    assert len(_generation_dirs(index)) == 1  # the prepared generation became current, the old one went
    with KuzuIndexStore(Generations(index), KEY, read_only=True) as reader:
        assert _docstring(reader) == "Settle an invoice (second)."
        assert _symbols(reader) == 1


def test_a_prepared_run_that_never_comes_leaves_the_index_as_it_was(index: Path):
    before = _generation_dirs(index)
    for full in (True, False):
        with KuzuIndexStore(Generations(index), KEY) as store:
            store.prepare(full=full, dimension=8)
            if full:
                assert len(_generation_dirs(index)) == 2  # staged now, beside the current one
        assert _generation_dirs(index) == before
        with KuzuIndexStore(Generations(index), KEY, read_only=True) as reader:
            assert _docstring(reader) == "Settle an invoice (first)."


def test_a_run_unlike_the_prepared_one_starts_as_it_would_have(index: Path):
    """Prepared incremental with 8-d vectors, run full with 4-d: the run empties the generation and
    makes the 4-d schema, not the prepared one's."""
    with KuzuIndexStore(Generations(index), KEY) as store:
        store.prepare(full=False, dimension=8)
        with store.run(full=True, dimension=4):
            assert _symbols(store) == 0
            store.write_file(_invoice_file("third"))
        assert store.get_meta("dimension") == "4"
        assert _docstring(store) == "Settle an invoice (third)."


def test_an_incremental_prepared_run_builds_on_the_current_graph(index: Path):
    with KuzuIndexStore(Generations(index), KEY) as store:
        store.prepare(full=False, dimension=8)
        assert _docstring(store) == "Settle an invoice (first)."  # the writer reads on while it is copied
        with store.run(full=False, dimension=8):
            assert _docstring(store) == "Settle an invoice (first)."  # a copy of the current generation
            store.set_meta("note", "edited")
        assert store.get_meta("note") == "edited"


def test_the_bare_database_store_prepares_in_place(tmp_path: Path):
    store = KuzuStore(tmp_path / "repo" / ".cg" / "graph.kuzu", repo_key=KEY)
    try:
        with store.run(full=True, dimension=8):
            store.write_file(_invoice_file("first"))
        store.prepare(full=True, dimension=8)
        assert _symbols(store) == 0  # emptied ahead of the run
        with store.run(full=True, dimension=8):
            store.write_file(_invoice_file("second"))
        assert _docstring(store) == "Settle an invoice (second)."
    finally:
        store.close()


def test_a_copy_that_failed_fails_the_run_and_leaves_the_index_as_it_was(index: Path, monkeypatch):
    before = _generation_dirs(index)

    def full_disk(staged):
        raise OSError(28, "No space left on device")

    with KuzuIndexStore(Generations(index), KEY) as store:
        monkeypatch.setattr(store.generations, "flush", full_disk)
        store.prepare(full=False, dimension=8)
        with pytest.raises(OSError, match="No space left"), store.run(full=False, dimension=8):
            pytest.fail("the run started without its generation")
    assert _generation_dirs(index) == before
    with KuzuIndexStore(Generations(index), KEY, read_only=True) as reader:
        assert _docstring(reader) == "Settle an invoice (first)."
