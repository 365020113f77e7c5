"""The embedded default store: Kùzu on disk, one generation at a time under ``<repo>/.cg/kuzu/``
(cg/graph/generations.py says why and how a run switches generations atomically).

Vector search is an exact cosine scan inside Kùzu (``array_cosine_similarity``) rather than its HNSW
index: on these machines building HNSW over 50k vectors took 322 s, while the exact scan answers in
tens of milliseconds with no build at all and is never stale. ``benchmarks/vector_search.py``
measures both (and numpy) on each run; see benchmarks/RESULTS.md. Full-text search is SQLite FTS5 in a
file beside the database (cg/graph/lexicon.py says why not Kùzu's fts extension), over the analyzer's
``search_text`` (see cg/lexical.py), written with the nodes and current on every write.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from cg.config import repo_key_for
from cg.graph import cypher as q
from cg.graph.cypher import text_field, vector_prop
from cg.graph.cypher_store import CypherStore, Statement
from cg.graph.generations import LEXICON, Generation, Generations, NoCompleteIndex, WriterLock
from cg.graph.kuzu_bulk import NODE_VECTORS, BulkLoad, Unbufferable
from cg.graph.lexicon import VECTORS as LEXICON_VECTORS
from cg.graph.lexicon import Lexicon
from cg.graph.readonly import vet
from cg.graph.resident import Resident
from cg.graph.store import SCHEMA_VERSION, CallRow, FileWrite, StoreError, commit_rows, doc_rows
from cg.model import CommitRecord, DocSection, Edge, External

if TYPE_CHECKING:
    import kuzu

log = logging.getLogger(__name__)
# Seconds of walks (reads by ids of calls, summaries, bases, members) a reader runs before it holds the
# generation's graph in memory: about what loading Django's costs (cg/graph/resident.py).
RESIDENT_AFTER = 1.5


# Every edge at a file's definitions but their chunks' (PART_OF goes and comes with the chunks), with both
# ends: Kùzu's internal id tells which end the edge leaves from.
_EDGES_AT_FILE = (
    "MATCH (s:Symbol {repo: $repo, path: $path})-[e]-(o) WHERE label(e) <> 'PART_OF'"
    " RETURN id(s), s.id, e, label(o), o.id"
)


def _schema(dimension: int) -> list[str]:
    return [
        "CREATE NODE TABLE IF NOT EXISTS Meta(key STRING PRIMARY KEY, repo STRING, value STRING)",
        "CREATE NODE TABLE IF NOT EXISTS File(id STRING PRIMARY KEY, repo STRING, path STRING, language STRING,"
        " kind STRING, blob_sha STRING, loc INT64, module STRING, committed_at INT64)",
        "CREATE NODE TABLE IF NOT EXISTS Symbol(id STRING PRIMARY KEY, repo STRING, name STRING, qualname STRING,"
        " kind STRING, path STRING, start_line INT64, end_line INT64, signature STRING, docstring STRING, text STRING,"
        f" header STRING, search_text STRING, literals STRING, parent_id STRING, language STRING, file_kind STRING,"
        f" blob_sha STRING, committed_at INT64, embedding FLOAT[{dimension}], doc_embedding FLOAT[{dimension}])",
        "CREATE NODE TABLE IF NOT EXISTS Chunk(id STRING PRIMARY KEY, repo STRING, owner_id STRING, kind STRING,"
        " path STRING, start_line INT64, end_line INT64, text STRING, search_text STRING,"
        f" embedding FLOAT[{dimension}])",
        "CREATE NODE TABLE IF NOT EXISTS External(id STRING PRIMARY KEY, repo STRING, name STRING, resolved BOOLEAN)",
        "CREATE NODE TABLE IF NOT EXISTS Doc(id STRING PRIMARY KEY, repo STRING, path STRING, title STRING,"
        " heading STRING, start_line INT64, end_line INT64, text STRING, search_text STRING,"
        f" embedding FLOAT[{dimension}])",
        "CREATE NODE TABLE IF NOT EXISTS Commit(id STRING PRIMARY KEY, repo STRING, short STRING, author STRING,"
        " committed_at INT64, subject STRING, message STRING, files INT64, search_text STRING,"
        f" embedding FLOAT[{dimension}])",
        "CREATE REL TABLE IF NOT EXISTS DEFINES(FROM File TO Symbol, FROM Symbol TO Symbol, line INT64)",
        "CREATE REL TABLE IF NOT EXISTS IMPORTS(FROM File TO File, FROM File TO Symbol, FROM File TO External,"
        " line INT64, resolved_by STRING)",
        "CREATE REL TABLE IF NOT EXISTS CALLS(FROM Symbol TO Symbol, FROM Symbol TO External, line INT64,"
        " resolved_by STRING, confidence DOUBLE, candidates INT64)",
        "CREATE REL TABLE IF NOT EXISTS INHERITS(FROM Symbol TO Symbol, FROM Symbol TO External, line INT64,"
        " resolved_by STRING)",
        "CREATE REL TABLE IF NOT EXISTS DECORATES(FROM Symbol TO Symbol, line INT64, resolved_by STRING)",
        "CREATE REL TABLE IF NOT EXISTS PART_OF(FROM Chunk TO Symbol)",
        "CREATE REL TABLE IF NOT EXISTS MENTIONS(FROM Doc TO Symbol)",
        "CREATE REL TABLE IF NOT EXISTS TOUCHES(FROM Commit TO File, FROM Commit TO Symbol)",
    ]


@contextmanager
def interrupt_on_ctrl_c(interrupt: Callable[[], None]) -> Iterator[None]:
    """While the block runs, Ctrl-C also stops the statement Kùzu is running, with ``interrupt``.

    Python runs a signal handler only between bytecodes, and one Kùzu statement can run for a minute
    (the compaction's ``EXPORT DATABASE`` and ``COPY`` of a big index): Ctrl-C waited for it. The C-level
    handler still writes the signal's number to the wakeup fd at once, so a thread blocked on that fd
    sees it and calls ``Connection.interrupt`` (Kùzu releases the GIL while it runs): the statement
    fails with "Interrupted", and the KeyboardInterrupt follows as the main thread resumes. Only the
    main thread may set the wakeup fd (a server's background index runs go without)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    previous = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            signals = os.read(read_end, 64)
            if previous != -1:  # whoever had the fd before hears of the signals too
                with suppress(OSError):
                    os.write(previous, signals)
            if signal.SIGINT in signals and not done.is_set():
                # AttributeError: the connection was closed by a reopen (``_reopen``) a moment before;
                # the main thread's KeyboardInterrupt still stops the run, without a thread's traceback
                with suppress(RuntimeError, AttributeError):
                    interrupt()

    watcher = threading.Thread(target=watch, name="cg-kuzu-interrupt", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        signal.set_wakeup_fd(previous)
        os.write(write_end, b"\0")  # wakes the watcher, which sees ``done``
        watcher.join(timeout=1)
        os.close(write_end)
        os.close(read_end)


def _return_freed_memory() -> None:
    """glibc's ``malloc_trim``: the heap's free pages handed back to the system (elsewhere, nothing)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc: its allocator keeps what it keeps


class KuzuStore(CypherStore):
    backend = "kuzu"
    batch_rows = 2000
    # A full run's rows go in by COPY (cg/graph/kuzu_bulk.py), this many per statement and at most this
    # many waiting in memory; 0 writes them statement by statement, as every other run does.
    bulk_rows = 20_000
    _bulk: BulkLoad | None = None  # the bulk load under way
    _ready: tuple[bool, int] | None = None  # (full, dimension) that ``prepare`` made ready for the next run
    _copied = 0  # rows the bulk load copied since the database was opened (``_reopen``)

    def __init__(self, path: Path, read_only: bool = False, repo_key: str | None = None) -> None:
        """A store over one database file for the repository ``repo_key`` (default: the key of the
        repository around ``path``, as the settings would derive it), written in place: what tests and
        benchmarks use. The product opens ``KuzuIndexStore`` (generations, a writers' lock) through
        cg/graph/backends.py."""
        super().__init__(repo_key if repo_key is not None else repo_key_for(path.parent.parent))
        self.read_only = read_only
        self._db: kuzu.Database | None = None
        if read_only and not path.exists():
            raise StoreError(f"no index at {path.parent}; run `cg index` first")
        self._open(path, read_only)
        if read_only:
            self._check_schema()

    def _open(self, path: Path, read_only: bool) -> None:
        import kuzu

        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = kuzu.Database(str(path), read_only=read_only)
        except RuntimeError as exc:  # Kùzu's lock and I/O errors run over two lines: keep one
            raise StoreError(f"cannot open the index at {path}: {' '.join(str(exc).split())}") from exc
        self._conn = kuzu.Connection(self._db)
        self._prepared: dict[str, kuzu.PreparedStatement] = {}  # a reader's statements, planned once
        self._fetched: dict[tuple[str, str, str], dict[str, Any]] = {}  # see ``_through_fetched``
        self._resident: Resident | None = None  # this generation's graph in memory (cg/graph/resident.py)
        self._walked = 0.0  # seconds the walks have cost this reader while not resident
        # a reader's generation never changes (cg/graph/generations.py), so its tables and meta values
        # are read once (an explain asked for them about 6 times each: 2-3 ms on Django)
        self._read_once: dict[Any, Any] | None = {} if read_only else None
        self._conn.execute("LOAD EXTENSION vector")
        self._lexicon = Lexicon(path.with_name(LEXICON), read_only)

    def _check_schema(self) -> None:
        """A reader of an index from an older cg, or built under another repository key, is one line."""
        unkeyed = self._unkeyed()
        if not unkeyed and self.get_meta("schema") == SCHEMA_VERSION:
            return
        other = None if unkeyed else self._built_for()
        self.close()
        if other is not None and other != self.repo_key:
            raise StoreError(
                f"the index in {self._repo} was built for repository key {other!r}, not"
                f" {self.repo_key!r} (--repo-key / CG_REPO_KEY); run `cg index` to rebuild it"
            )
        raise StoreError(f"the index in {self._repo} was built by an older cg; run `cg index` to rebuild it")

    @property
    def _repo(self) -> Path:
        return self.path.parent.parent  # <repo>/.cg/graph.kuzu

    @contextmanager
    def run(self, full: bool, dimension: int | None = None) -> Iterator[None]:
        """In place, not atomic: a bare database file has no generation to switch (KuzuIndexStore has)."""
        if not self._made_ready(full, dimension):
            if full:
                self.reset()
            if dimension is not None:
                self.ensure_schema(dimension)
        with self._bulk_load(full, dimension):
            yield
        self._lexicon.commit()

    def prepare(self, full: bool, dimension: int) -> None:
        """Empty the database (``full``) and make the schema now, before the run (GraphWriter.prepare)."""
        if full:
            self.reset()
        self.ensure_schema(dimension)
        self._ready = (full, dimension)

    def _made_ready(self, full: bool, dimension: int | None) -> bool:
        """Whether ``prepare`` made this run's start ready (nothing is written between the two: writes
        happen inside runs only); it is used once."""
        ready, self._ready = self._ready, None
        return ready is not None and ready == (full, dimension)

    # -- a full run's bulk load (cg/graph/kuzu_bulk.py) ----------------------------------------------
    @contextmanager
    def _bulk_load(self, full: bool, dimension: int | None) -> Iterator[None]:
        """While a full run writes into its empty tables, take its rows in bulk; copy what waits when
        the run's block ends well, drop it when it fails (the run's writes are discarded anyway)."""
        if full and dimension is not None and self.bulk_rows:
            self._bulk = BulkLoad(dimension, self.bulk_rows)
        try:
            yield
            self._end_bulk()
        finally:
            self._bulk = None

    def _flush(self) -> None:
        """Copy the rows waiting in the bulk load (before any other statement runs), giving Kùzu's
        memory back each time statements of ``bulk_rows`` weight (cg/graph/kuzu_bulk.py ``weight``)
        were copied since the database was opened (``_reopen``): within a flush too, since the last
        one of a run holds every edge (Django: 218,000 rows, which took the process up by 330 MB)."""
        bulk = self._bulk
        if bulk is None or not bulk.pending:
            return
        for query, params, rows_weight in bulk.drain():
            self._conn.execute(query, self._params(query, params))
            self._copied += rows_weight
            if self._copied >= self.bulk_rows:
                self._reopen()

    def _reopen(self) -> None:
        """Close the database and open it again, and ask the C allocator to return what it freed.

        Why: Kùzu 0.11.3 keeps heap memory of its own for what a connection copied until the database
        is closed: over Django's full write (63k nodes, 218k edges, 35 s) the C heap in use rose from
        0.3 to 1.5 GB, and the run peaked at 2.8 GB of RSS. Neither its buffer pool (capped at 512 MB:
        2.77 GB) nor a CHECKPOINT after each COPY (2.80 GB) changed that; closing gave the 1.2 GB back.
        Reopened after each ``bulk_rows`` rows copied, the same run peaked at 1.70 GB with the same
        write stage (34.8 s against 35; a reopen takes 0.1-0.2 s, about 16 on Django, none on a
        project under ``bulk_rows``). Every statement commits on its own, so nothing is pending."""
        self._copied = 0
        path = self.path
        self._close_db()
        _return_freed_memory()
        self._open(path, read_only=False)

    def _end_bulk(self) -> None:
        """Copy what waits and write statement by statement from now on: the next write is one the
        bulk load cannot take, or the run is over."""
        self._flush()
        self._bulk = None

    def _buffered(self, added: list[dict[str, Any]] | None = None) -> None:
        """After rows went into the bulk load: copy them once enough wait, and merge the Externals
        written again with other properties (``added``) by statement."""
        if self._bulk is not None and self._bulk.pending >= self.bulk_rows:
            self._flush()
        if added:
            self._write(q.UPSERT_EXTERNALS, {"rows": added})

    def _took(self, add: Callable[[BulkLoad], list[dict[str, Any]] | None], when: bool = True) -> bool:
        """Whether the bulk load took a write (``add`` hands it over, ``when`` it may); when it cannot,
        the load ends and the caller writes by statement."""
        if self._bulk is not None and when:
            try:
                added = add(self._bulk)
            except Unbufferable:
                pass
            else:
                self._buffered(added)
                return True
        self._end_bulk()
        return False

    def write_file(self, write: FileWrite) -> None:
        self._lexicon.replace_file(self.repo_key, write)
        if self._took(lambda bulk: bulk.add_file(write), write.new):
            return
        if write.new:
            super().write_file(write)
        else:
            self._replace_file(write)

    def _replace_file(self, write: FileWrite) -> None:
        """Write a file the store holds an earlier version of by writing only what changed: a definition
        or chunk whose text, names or vector changed is deleted and created anew (with the edges other
        files' nodes have to it put back as they were), one that is gone is deleted, one that only moved
        (its lines, the file's sha) is updated in place, and the rest is left alone.

        Why not update changed rows in place, as Neo4j does: Kùzu 0.11.3 stores a string or list column
        out of place, so one updated row rewrites the column's whole node group (Django's 45k
        definitions are one) into new pages that are never given back. One edited function in Django
        grew the database from 383 to 808 MB, which made every one-file edit pay the compacting
        rewrite (30 s). Why not delete and create all of the file's rows, as this did before: every row
        created or deleted costs the CHECKPOINT that ends the run. Measured on a copy of Django's index
        (CHECKPOINT alone 0.12-0.17 s): 30 definitions created 0.6-1.2 s, 27 deleted 0.31 s, one
        deleted and one created 0.22 s, and 27 rows' lines and sha set 0.16 s; one changed text set in
        place 0.51 s, one vector 1.0 s. A one-line edit of a function body changes one definition and
        moves the ones below it. The transactions need not be one: a run writes a staged generation
        that no reader sees until the run ends well (a failure discards it), and deleting and
        re-creating a file's chunks in one transaction is what once crashed Kùzu (cypher.py's note at
        DELETE_STALE_CHUNKS)."""
        path = write.file.path
        symbols = write.symbol_rows()
        chunks = write.chunk_rows()
        self._write_all(  # the file's own edges, as for any file written again (CypherStore._file_statements)
            [
                (q.DELETE_EDGES_FROM_FILE, {"path": path}),
                (q.DELETE_EDGES_FROM_SYMBOLS_OF, {"path": path}),
                (q.DELETE_DECORATES_INTO, {"path": path}),
            ]
        )
        stored = self._records(q.STORED_SYMBOLS_OF, {"path": path}, q.STORED_SYMBOL_COLUMNS)
        new_symbols, moved_symbols, gone_symbols = _changes(stored, symbols, _MOVES["Symbol"])
        stored = self._records(q.STORED_CHUNKS_OF, {"path": path}, q.STORED_CHUNK_COLUMNS)
        new_chunks, moved_chunks, gone_chunks = _changes(stored, chunks, _MOVES["Chunk"])
        created = {r["id"] for r in new_symbols}
        recreated_chunks = {r["id"] for r in new_chunks}
        kept = self._edges_of_kept(path, {s["id"] for s in symbols}, only=created)
        self._write_all(
            [(q.DELETE_SYMBOLS_BY_ID, {"ids": ids}) for ids in (gone_symbols + sorted(created),) if ids]
            + [(q.DELETE_CHUNKS_BY_ID, {"ids": ids}) for ids in (gone_chunks + sorted(recreated_chunks),) if ids]
        )
        # a chunk is linked to its owner when either is new: deleting an owner took its chunks' links along
        links = [c for c in chunks if c["owner_id"] in created or c["id"] in recreated_chunks]
        statements = self._file_statements(write, False, new_symbols, new_chunks, links)
        statements += [(q.MOVE_SYMBOLS, {"rows": moved_symbols})] if moved_symbols else []
        statements += [(q.MOVE_CHUNKS, {"rows": moved_chunks})] if moved_chunks else []
        for (rel, src, dst), rows in kept.items():
            statements += [
                (q.recreate_edges(rel, src, dst), {"rows": rows[start : start + self.batch_rows]})
                for start in range(0, len(rows), self.batch_rows)
            ]
        self._write_all(statements)

    def _edges_of_kept(
        self, path: str, keep: set[str], only: set[str] | None = None
    ) -> dict[tuple[str, str, str], list[dict[str, Any]]]:
        """The edges left at the file's definitions once its own edges are gone (calls, imports and
        inheritance from other files, docs' mentions, commits' touches, decorators it applies elsewhere),
        by (type, source label, target label), for the definitions the new version keeps: the others
        lose theirs, as DETACH DELETE of a stale definition does. ``only``: of these definitions alone
        (the ones deleted to be created anew)."""
        rows = self._read(_EDGES_AT_FILE, {"path": path})
        own = {own_id for _, own_id, _, _, _ in rows}
        kept: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        seen: set[tuple[int, int]] = set()
        for own_node, own_id, edge, other_label, other_id in rows:
            key = (edge["_id"]["table"], edge["_id"]["offset"])
            if key in seen:  # an edge between two of the file's definitions comes once from each end
                continue
            seen.add(key)
            if own_id not in keep or (other_label == "Symbol" and other_id in own and other_id not in keep):
                continue
            if only is not None and own_id not in only and not (other_label == "Symbol" and other_id in only):
                continue
            rel = edge["_label"]
            outgoing = edge["_src"] == own_node
            src, dst = ("Symbol", other_label) if outgoing else (other_label, "Symbol")
            row = {"src": own_id if outgoing else other_id, "dst": other_id if outgoing else own_id}
            row.update((column, edge.get(column)) for column in q.KEPT_EDGE_COLUMNS[rel])
            kept.setdefault((rel, src, dst), []).append(row)
        return kept

    def write_edges(self, edges: list[Edge], externals: Iterable[External] = ()) -> None:
        if not self._took(lambda bulk: bulk.add_edges(edges, externals)):
            super().write_edges(edges, externals)

    def write_docs(
        self, path: str, sections: list[DocSection], embeddings: np.ndarray | None, new: bool = False
    ) -> None:
        self._lexicon.replace_docs(self.repo_key, path, sections, new)
        if not self._took(lambda bulk: bulk.add_docs(sections, doc_rows(sections, embeddings)), new):
            super().write_docs(path, sections, embeddings, new)

    def write_mentions(self, paths: list[str], pairs: list[tuple[str, str]]) -> None:
        if not self._took(lambda bulk: bulk.add_mentions(paths, pairs)):
            super().write_mentions(paths, pairs)

    def write_commits(self, commits: list[CommitRecord], embeddings: np.ndarray | None) -> None:
        self._lexicon.put_commits(self.repo_key, commits)
        if not self._took(lambda bulk: bulk.add_commits(commits, commit_rows(commits, embeddings))):
            super().write_commits(commits, embeddings)

    def write_touches(self, pairs: list[tuple[str, str, str]]) -> None:
        if not self._took(lambda bulk: bulk.add_touches(pairs)):
            super().write_touches(pairs)

    # the writes that change what the load has written: it ends first
    def delete_files(self, paths: list[str]) -> None:
        if paths:
            self._end_bulk()
            self._lexicon.delete_paths(paths)
        super().delete_files(paths)

    def delete_edges(self, paths: list[str]) -> None:
        if paths:
            self._end_bulk()
        super().delete_edges(paths)

    def delete_commits(self, ids: list[str]) -> None:
        if ids:
            self._end_bulk()
            self._lexicon.delete_commits(ids)
        super().delete_commits(ids)

    def prune_externals(self) -> int:
        self._end_bulk()
        return super().prune_externals()

    def set_vectors(self, label: str, prop: str, ids: list[str], vectors: np.ndarray) -> None:
        self._end_bulk()
        self._lexicon.set_vectors(label, prop, ids, vectors)
        super().set_vectors(label, prop, ids, vectors)

    # -- primitives ------------------------------------------------------------------------------
    def _execute(self, query: str, params: dict[str, Any] | None = None, prepare: bool = False) -> kuzu.QueryResult:
        if self._bulk is not None and self._bulk.pending:
            self._flush()  # a read sees the run's writes; any other statement runs after them
        statement: str | kuzu.PreparedStatement = query
        if prepare:
            statement = self._prepared.get(query) or self._prepare(query)
        result = self._conn.execute(statement, self._params(query, params))
        if isinstance(result, list):  # Kùzu answers `a; b` with one result per statement
            raise StoreError("one Cypher statement at a time")
        return result

    def _prepare(self, query: str) -> kuzu.PreparedStatement:
        """Planning is a third of a graph read's time (a walk such as ``cg impact`` runs forty of them),
        so a read-only store keeps each of its own statements planned: its schema cannot change under
        it, and a new generation opens a new connection and a new cache (``_open``). Only cg's own
        statements come here (a bounded set); a user's Cypher is planned afresh each time."""
        if len(self._prepared) >= 512:
            self._prepared.clear()
        # what ``execute`` builds for each query string (``Connection.prepare`` says the same with a
        # DeprecationWarning: Kùzu would rather plan inside execute; 0.11.3, pinned, is its last release)
        import kuzu

        prepared = self._prepared[query] = kuzu.PreparedStatement(self._conn, query)
        return prepared

    def _read(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        return _rows(self._execute(query, params, prepare=self.read_only and bool(params)))

    def _write(self, query: str, params: dict[str, Any] | None = None) -> None:
        self._read(query, params)

    def _read_by_ids(self, query: str, ids: list[str]) -> list[list[Any]]:
        """A few ids are looked up one by one. Kùzu 0.11.3 answers ``n.id IN $ids`` by scanning the whole
        table (Django's 45,000 symbols: 7-13 ms for one id), while ``n.id = $id`` is a primary-key
        lookup (0.1-0.3 ms, planned once: ``_prepare``); up to ``BY_KEY_UP_TO`` ids that is the
        faster way (measured on Django: 20 ids 2-8 ms against 10-13, 80 ids about even, 371 ids
        slower), and explain reads most of its nodes in small sets."""
        unique = list(dict.fromkeys(ids))
        if len(unique) > BY_KEY_UP_TO:
            return super()._read_by_ids(query, unique)
        one = _by_key(query)
        return [row for node_id in unique for row in self._read(one, {"id": node_id})]

    def _write_all(self, statements: list[Statement]) -> None:
        self._flush()  # outside the transaction: the bulk load's rows are not this statement's
        self._conn.execute("BEGIN TRANSACTION")
        try:
            for query, params in statements:
                self._read(query, params)
            self._conn.execute("COMMIT")
        except Exception:
            try:
                self._conn.execute("ROLLBACK")
            except RuntimeError:
                pass  # Kùzu already rolled the failed transaction back
            raise

    def _cast(self, dimension: int) -> str:
        return f"CAST({{}} AS FLOAT[{dimension}])"

    def _params(self, query: str, params: dict[str, Any] | None) -> dict[str, Any]:
        """The shared parameters, with each vector a statement casts (``CAST(r.embedding AS FLOAT[384])``)
        passed as its text, ``"[0.0123,-0.045,...]"``, which the cast parses.

        Why: Kùzu 0.11.3's Python binding turns a list parameter's floats into values one by one, and
        the memory that takes stays with the process. Copying 6,000 definitions of Django with their
        vectors as lists took RSS from 1.2 to 3.3 GB, and a full index of Django with its vectors
        peaked at 8.3 GB; the same vectors as text: 0.55 GB for 24,000 of them in a bare table against
        3.1 GB as lists, in half the time (the strings are the cheap kind of parameter). Nine
        significant digits give back every float32 exactly."""
        params = super()._params(query, params)
        keys = _CAST_ROW_VECTOR.findall(query)
        rows = params.get("rows")
        if keys and isinstance(rows, list):
            params = {**params, "rows": [_vectors_as_text(r, keys) for r in rows]}
        return params

    def _has(self, label: str) -> bool:
        return label in self._tables()

    def _once(self, key: Any, read: Callable[[], Any]) -> Any:
        """``read()``, kept under ``key`` for the rest of a read-only generation (``_read_once``)."""
        if self._read_once is None:
            return read()
        if key not in self._read_once:
            self._read_once[key] = read()
        return self._read_once[key]

    def _tables(self) -> set[str]:
        return cast(set[str], self._once("tables", self._show_tables))

    def _show_tables(self) -> set[str]:
        return {row[1] for row in self._read("CALL show_tables() RETURN *")}

    def get_meta(self, key: str) -> str | None:
        return cast("str | None", self._once(("meta", key), lambda: super(KuzuStore, self).get_meta(key)))

    def _unkeyed(self) -> bool:
        """Built by a cg before repository keys (schema 6 and older): its tables have no ``repo``."""
        if "Meta" not in self._tables():
            return False
        return "repo" not in {row[1] for row in self._read("CALL table_info('Meta') RETURN *")}

    def _built_for(self) -> str | None:
        """The key of the repository this database was built for (one per Kùzu database), if any."""
        if "Meta" not in self._tables():
            return None
        rows = self._read("MATCH (m:Meta) WHERE m.key = 'schema' RETURN m.repo")
        return rows[0][0] if rows else None

    def ensure_schema(self, dimension: int) -> None:
        self._dimension = dimension
        if self._unkeyed() or ("Meta" in self._tables() and self.get_meta("schema") != SCHEMA_VERSION):
            self.reset()  # built by an older cg, or for another repository key: start over
            self._dimension = dimension
        tables = self._tables()
        if "Symbol" in tables:
            current = self.get_meta("dimension")
            if current is not None and int(current) != dimension:
                raise StoreError(
                    f"the index holds {current}-d embeddings but the model gives {dimension}-d; "
                    "rebuild with `cg index --rebuild`"
                )
        for statement in _schema(dimension):
            self._write(statement)
        self.set_meta("dimension", str(dimension))
        self.set_meta("schema", SCHEMA_VERSION)

    def lease(self, wait: float = 0.0) -> AbstractContextManager[None]:
        """Nothing to take: Kùzu's own file lock already lets one process at a time open the database
        for writing, and the database holds this repository alone."""
        return nullcontext()

    def reset(self) -> None:
        self._bulk = None  # the run starting again empties what it was loading too
        self._close_db()
        for f in (self.path, self.path.with_name(self.path.name + ".wal"), self._lexicon.path):
            if f.is_dir() and not f.is_symlink():
                shutil.rmtree(f)
            else:
                f.unlink(missing_ok=True)
        self._open(self.path, self.read_only)

    # -- reads -----------------------------------------------------------------------------------
    def fulltext(
        self, analyzed_query: str, limit: int, label: str = "Symbol", field: str = "search_text"
    ) -> list[tuple[str, float]]:
        rows = self._lexicon.search(self.repo_key, *text_field(label, field), analyzed_query, limit)
        self._keep_fetched("fulltext", (label, field), {r[0]: r[2] for r in rows})
        if label == "Chunk":  # a chunk's owner: what ranking the hits reads next
            self._keep_fetched("fulltext", ("Chunk", "owner_id"), {r[0]: r[3] for r in rows})
        return [(r[0], r[1]) for r in rows]

    def vector(
        self, embedding: np.ndarray, limit: int, label: str = "Symbol", prop: str = "embedding"
    ) -> list[tuple[str, float]]:
        vector_prop(label, prop)
        dim = int(embedding.shape[0])
        owner = ", n.owner_id" if label == "Chunk" else ""
        rows = self._read(
            f"MATCH (n:{label}) WHERE n.repo = $repo AND n.{prop} IS NOT NULL"
            f" WITH n, array_cosine_similarity(n.{prop}, CAST($q AS FLOAT[{dim}])) AS score"
            f" RETURN n.id, score{owner} ORDER BY score DESC LIMIT $k",
            {"q": vector_text(embedding.astype(np.float32)), "k": limit},
        )
        # Not the vectors with the hits: a scan that returns them carries every row's vector through its
        # sort (Django's definitions: 35 ms a scan against 17). Ranking reads the pool's vectors next
        # (cg/queries/search.py, vector_scores), a definition's from the full-text index's copy, and
        # scores them with numpy, as on Neo4j, so both stores rank alike to the last digit.
        if owner:
            self._keep_fetched("vector", ("Chunk", "owner_id"), {r[0]: r[2] for r in rows})
        return [(r[0], float(r[1])) for r in rows]

    def best_cosines(self, vectors: np.ndarray) -> list[float]:
        """The best cosine between each of ``vectors`` and any definition's vector, in one scan of the
        Symbol table (cg/ingest/baseline.py); 0.0 each in an index without vectors."""
        if not len(vectors):
            return []
        dim = int(vectors.shape[1])
        columns = ", ".join(
            f"max(array_cosine_similarity(n.embedding, CAST($p{i} AS FLOAT[{dim}])))" for i in range(len(vectors))
        )
        params = {f"p{i}": vector_text(v.astype(np.float32)) for i, v in enumerate(vectors)}  # text: see _params
        rows = self._read(f"MATCH (n:Symbol) WHERE n.repo = $repo AND n.embedding IS NOT NULL RETURN {columns}", params)
        return [float(x) if x is not None else 0.0 for x in (rows[0] if rows else [None] * len(vectors))]

    # Candidates come with what ranking them reads next. Kùzu 0.11.3 answers a read of nodes by a list
    # of ids by scanning the table (``_read_by_ids``): re-reading the 300 full-text candidates' texts
    # and the chunks' owners took 120 of an explain's 590 ms on Django, and the vectors of the full-text
    # candidates outside the vector pool (``_complete_cosines``: 350 ids) another 80 ms. So ``fulltext``
    # and ``vector`` return those columns with the hits (a definition's full-text hit its vector too:
    # 27 ms more for 300; a vector hit only a chunk's owner: see ``vector``), and the reads that follow
    # are answered from the last full-text and the last vector hits of that label (the last call's of
    # each: nothing is remembered from one question to the next); only the ids among neither are read.
    # A store being written never answers from them.
    def _keep_fetched(self, source: str, key: tuple[str, str], values: dict[str, Any]) -> None:
        self._fetched[(source, *key)] = values

    def _through_fetched(
        self, key: tuple[str, str], ids: list[str], read: Callable[[list[str]], dict[str, Any]]
    ) -> dict[str, Any]:
        """The values of ``ids`` kept from the last hits, and ``read`` for the others."""
        kept = [self._fetched.get((source, *key), {}) for source in ("fulltext", "vector")] if self.read_only else []
        known: dict[str, Any] = {}
        for values in kept:
            known.update({i: values[i] for i in ids if i in values})
        missing = [i for i in dict.fromkeys(ids) if i not in known]
        return {**known, **read(missing)} if missing else known

    def lexical_docs(self, ids: list[str], label: str = "Symbol", field: str = "search_text") -> dict[str, str]:
        def read(missing: list[str]) -> dict[str, str]:
            # the full-text index holds the same text under the node's id (a primary-key read in SQLite
            # where Kùzu looks a few ids up one by one or scans the table: ``_read_by_ids``)
            known = self._lexicon.texts(self.repo_key, label, field, missing)
            rest = [i for i in missing if i not in known]
            return {**known, **super(KuzuStore, self).lexical_docs(rest, label, field)} if rest else known

        return {i: text or "" for i, text in self._through_fetched((label, field), ids, read).items()}

    def embeddings(self, ids: list[str], label: str = "Symbol", prop: str = "embedding") -> dict[str, np.ndarray]:
        def read(missing: list[str]) -> dict[str, np.ndarray | None]:
            known: dict[str, np.ndarray | None] = {}
            if label == "Symbol" and prop in LEXICON_VECTORS:  # the definitions' vectors, kept there too
                known = self._lexicon.vectors(prop, missing)
            rest = [i for i in missing if i not in known]
            return {**known, **super(KuzuStore, self).embeddings(rest, label, prop)} if rest else known

        values = self._through_fetched(vector_prop(label, prop), ids, read)
        return {i: np.asarray(v, dtype=np.float32) for i, v in values.items() if v is not None}

    def chunk_owners(self, ids: list[str]) -> dict[str, str]:
        return self._through_fetched(("Chunk", "owner_id"), ids, super().chunk_owners)

    # The walks: answered by the resident graph once loading it has paid (cg/graph/resident.py).
    def symbols(self, ids: list[str], with_text: bool = True) -> dict[str, dict[str, Any]]:
        if with_text:  # the code itself stays in Kùzu
            return super().symbols(ids, with_text)
        return cast(dict[str, dict[str, Any]], self._walk("symbols", ids, False))

    def calls(self, ids: list[str], direction: str) -> list[CallRow]:
        return cast(list[CallRow], self._walk("calls", ids, direction))

    def caller_counts(self, ids: list[str]) -> dict[str, int]:
        return cast(dict[str, int], self._walk("caller_counts", ids))

    def inherits(self, ids: list[str], direction: str) -> list[tuple[str, str]]:
        return cast(list[tuple[str, str]], self._walk("inherits", ids, direction))

    def members(self, ids: list[str]) -> list[dict[str, Any]]:
        return cast(list[dict[str, Any]], self._walk("members", ids))

    def decorators(self, ids: list[str]) -> list[tuple[str, str, int]]:
        return cast(list[tuple[str, str, int]], self._walk("decorators", ids))

    def classes_named(self, names: list[str]) -> list[dict[str, Any]]:
        return cast(list[dict[str, Any]], self._walk("classes_named", names))

    def docs_mentioning(self, ids: list[str]) -> dict[str, list[str]]:
        return cast(dict[str, list[str]], self._walk("docs_mentioning", ids))

    def commits_touching(self, ids: list[str], limit: int = 5) -> dict[str, list[dict[str, Any]]]:
        """The commits stay in the store; the resident graph only says which ids any commit touches."""
        resident = self._resident_graph()
        if resident is not None:
            ids = [i for i in ids if i in resident.touched]
        return super().commits_touching(ids, limit)

    def _walk(self, read: str, *args: Any) -> Any:
        """``read`` from the resident graph when there is one, else by statement (its time counted)."""
        resident = self._resident_graph()
        if resident is not None:
            return getattr(resident, read)(*args)
        started = time.perf_counter()
        try:
            return getattr(CypherStore, read)(self, *args)
        finally:
            self._walked += time.perf_counter() - started

    def _resident_graph(self) -> Resident | None:
        """The resident graph, loaded now if the walks have cost ``RESIDENT_AFTER`` seconds; None for a
        store being written, or before then."""
        if self._resident is None and self.read_only and self._walked >= RESIDENT_AFTER:
            self._walked = float("-inf")  # one attempt per generation
            try:
                self._resident = Resident(lambda query: self._read(query, {}))
            except (RuntimeError, MemoryError) as exc:
                log.warning("reading the graph from the index at each step: cannot hold it in memory (%s)", exc)
        return self._resident

    def cypher(
        self, query: str, params: dict[str, Any] | None = None, write: bool = False
    ) -> tuple[list[str], list[list[Any]]]:
        if not write and not self.read_only:
            raise StoreError("internal: read-only Cypher needs a store opened read_only")
        params = self._params(query, params)  # $repo is this store's key unless the caller gave one
        if write:
            self._end_bulk()
        query = vet(query, params, write)  # the allow-list, before Kùzu sees any of it
        try:
            result = self._execute(query, params)
        except RuntimeError as exc:
            raise StoreError(str(exc).splitlines()[0]) from exc
        return result.get_column_names(), _rows(result)

    def repositories(self) -> list[str]:
        """A Kùzu database holds one repository: this one, once it is indexed."""
        return [self.repo_key] if self.get_meta("schema") is not None else []

    def for_repo(self, key: str) -> KuzuStore:
        if key != self.repo_key:
            raise StoreError(f"a Kùzu index holds one repository ({self.repo_key!r}), not {key!r}")
        return self

    def close(self) -> None:
        self._close_db()

    def _close_db(self) -> None:
        if self._db is not None:
            self._lexicon.close()
            self._conn.close()
            self._db.close()
            self._db = None


class KuzuIndexStore(KuzuStore):
    """The product's embedded store: a repository's generations (cg/graph/generations.py).

    A reader opens the current generation read-only. A writer holds the writers' lock from open to
    close and reads the current generation read-only until ``run`` starts; a run writes a staged
    generation (a copy, or empty for a full run) that becomes current only when the run ends well,
    so a reader sees the previous complete graph or the new one, never a part."""

    def __init__(
        self,
        generations: Generations,
        repo_key: str,
        read_only: bool = False,
        lock_wait: float = 60.0,
        compact_growth: float = 2.0,
    ) -> None:
        CypherStore.__init__(self, repo_key)
        self.compact_growth = compact_growth
        self._vectors: list[tuple[str, str, list[str], np.ndarray]] = []  # set_vectors' rows not written yet
        self._steps: dict[str, float] = {}  # run_steps: the last run's
        self._copying: Future[tuple[Generation, float]] | None = None  # prepare's copy of the current generation
        self.generations = generations
        self.read_only = read_only
        self._db = None
        self._staged: Generation | None = None
        self._lock: WriterLock | None = None
        if read_only:
            self._open_current()
            self._check_schema()
            return
        self._lock = generations.lock(lock_wait)
        try:
            generations.prepare()
            current = generations.current()
            if current is None:
                self._stage(None)
            else:
                self._open(current.db, read_only=True)
        except BaseException:
            self.close()
            raise

    @property
    def _repo(self) -> Path:
        return self.generations.index_dir.parent

    def _open_current(self) -> None:
        """Open the generation the pointer names; read the pointer again when a writer switched it and
        removed that generation between the read and the open."""
        for _ in range(5):
            current = self.generations.current()
            if current is None:
                raise NoCompleteIndex(self.generations.missing_reason())
            try:
                self._open(current.db, read_only=True)
                return
            except StoreError:
                if self.generations.current() == current:
                    raise
        raise StoreError(f"the index of {self._repo} changed five times while opening it; try again")

    def outdated(self) -> bool:
        """A reader keeps the generation it opened, while a later run may have switched the pointer to a
        newer one (a long-lived session, such as ``cg mcp``'s, reopens when this says so)."""
        if self._db is None or self._staged is not None:
            return False
        current = self.generations.current()
        return current is not None and current.db != self.path

    def _stage(self, copy_of: Generation | None) -> None:
        started = time.perf_counter()
        self._close_db()
        self._write_into(self.generations.stage(copy_of))
        self._steps = {"copy" if copy_of is not None else "create": time.perf_counter() - started}

    def _write_into(self, staged: Generation) -> None:
        """Make ``staged`` the run's generation, open for writing (the generation read until now closed)."""
        self._close_db()
        self._staged = staged
        self._open(staged.db, read_only=False)

    def _copy_current(self) -> Future[tuple[Generation, float]]:
        """The current generation copied into a new one and flushed to disk, in a thread of its own
        while the caller works on (``prepare``); the future gives it and the seconds it took.

        Why: the copy and its flush cost in proportion to the index, not to the run (Django's 400 MB
        database without vectors; 650 MB with them), and they are the kernel's work (``sendfile``,
        ``fsync``), so they overlap the run's parsing and resolving, Python's work, on another core.
        Flushed here, the pages the run then changes are all the switch has left to flush. Safe to copy
        while this writer reads the current generation: it holds the writers' lock, and it and every
        reader open that generation read-only (its database and its full-text index alike)."""
        current = self.generations.current()
        assert current is not None

        def copy() -> tuple[Generation, float]:
            started = time.perf_counter()
            staged = self.generations.stage(current)
            try:
                self.generations.flush(staged)
            except BaseException:
                self.generations.discard(staged)
                raise
            return staged, time.perf_counter() - started

        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cg-generation-copy")
        try:
            return pool.submit(copy)
        finally:
            pool.shutdown(wait=False)  # the thread ends with the copy

    def _take_copy(self, wanted: bool) -> bool:
        """Open the generation ``prepare``'s copy made (waiting for it to end) as the run's, when the
        run ``wanted`` one; otherwise discard it. Whether it was taken."""
        copying = self._copying
        if copying is None:
            return False
        started = time.perf_counter()
        try:
            staged, seconds = copying.result()  # the copy's error, if it had one, is the run's
        finally:
            if copying.done():  # not after a Ctrl-C while waiting: ``close`` waits for it again
                self._copying = None
        if not wanted or self._staged is not None:
            self.generations.discard(staged)
            return False
        self._write_into(staged)
        self._steps = {"copy": seconds, "waited": time.perf_counter() - started}
        return True

    def run_steps(self) -> dict[str, float]:
        """The last run's generation steps (GraphWriter.run_steps): ``copy`` (the current generation
        copied to be written, with the database closed and opened again; ``create`` for an empty one;
        when ``prepare`` copied it beside the run's work, the copy and its flush to disk, and
        ``waited``: what the run waited for it and took to open it),
        ``vectors`` (the vectors set after the graph, when a run sets them), ``compact`` (the
        CHECKPOINT that measures the file, and the rewrite when it grew) and ``switch`` (the database
        closed, its files flushed to disk, the pointer moved and the generation opened to read).

        Why report them: they cost in proportion to the whole index, not to what the run changed (a
        one-file edit of Django copies and flushes the 400 MB database), and how long a copy and a
        flush take depends on the disk and on what else is writing to it (a cold copy of that file took
        4.9 s where a warm one took 0.2), so an edit's time cannot be read without them."""
        return dict(self._steps)

    @contextmanager
    def run(self, full: bool, dimension: int | None = None) -> Iterator[None]:
        """Write a new generation (a copy of the current one, or empty when ``full``) and make it the
        current one when the block ends without an exception; otherwise it is removed."""
        if not (self._made_ready(full, dimension) and self._staged is not None):
            self._start(full, dimension)
        try:
            with interrupt_on_ctrl_c(lambda: self._conn.interrupt()):
                with self._bulk_load(full, dimension):
                    yield
                self._write_vectors()
                started = time.perf_counter()
                self._compact_if_grown()
                self._steps["compact"] = time.perf_counter() - started
        except BaseException:
            self._discard()
            raise
        started = time.perf_counter()
        staged, self._staged = self._staged, None
        self._close_db()
        assert staged is not None
        self.generations.switch(staged)
        self._open(staged.db, read_only=True)
        self._steps["switch"] = time.perf_counter() - started

    def _start(self, full: bool, dimension: int | None) -> None:
        """The run's generation: a copy of the current one, or empty when ``full``, with its schema."""
        if self.read_only or self._lock is None:
            raise StoreError("internal: an index run needs a store opened for writing")
        if self._staged is None and not self._take_copy(wanted=not full):
            self._stage(None if full else self.generations.current())
        elif full:
            self.reset()
        if dimension is not None:
            self.ensure_schema(dimension)

    def prepare(self, full: bool, dimension: int) -> None:
        """Make the run's generation ready (GraphWriter.prepare): a run that builds on the current
        generation gets a copy of it made beside the caller's work (``_copy_current``), opened when the
        run starts; a full run's empty generation is staged and its schema made now. A run that never
        comes leaves either to ``close``, which discards it."""
        if not full and self._staged is None and self.generations.current() is not None:
            if self._copying is None:
                self._copying = self._copy_current()
        else:
            self._start(full, dimension)
        self._ready = (full, dimension)

    # -- the vectors of a run that sets them after the graph (pipeline.fill_vectors) ----------------
    def set_vectors(self, label: str, prop: str, ids: list[str], vectors: np.ndarray) -> None:
        """Keep the vectors until the next statement (``_write_vectors``): set together, many of them
        are written by rewriting the generation rather than by one SET per node."""
        if len(ids) != len(vectors):
            raise ValueError(f"{len(ids)} ids for {len(vectors)} vectors")
        vector_prop(label, prop)
        self._end_bulk()
        if ids:
            self._lexicon.set_vectors(label, prop, ids, vectors)
            self._vectors.append((label, prop, list(ids), vectors))

    def _execute(self, query: str, params: dict[str, Any] | None = None, prepare: bool = False) -> kuzu.QueryResult:
        if self._vectors:
            self._write_vectors()  # a read sees the vectors set before it
        return super()._execute(query, params, prepare)

    def _write_vectors(self) -> None:
        """Write the vectors ``set_vectors`` kept. Up to ``VECTOR_REWRITE_AT`` of them by SET; more by
        rewriting the generation with them (``_rewrite``), unless rewrites are off
        (``compact_growth`` 0) or the rewrite fails, which falls back to SET.

        Why: in Kùzu 0.11.3 a SET of list values costs memory far beyond the buffer pool. Setting
        Django's 45,042 definition vectors, 2,000 per statement, took 41-65 s and peaked at 3.4-3.6 GB
        of RSS, the same with the buffer pool capped at 2 GB (capped at 512 MB it failed); a CHECKPOINT
        after each statement did not lower it and one transaction took 815 s. The rewrite of the same
        database with the same vectors took 27 s at 1.8 GB (``_copy_with_vectors``), and leaves the
        file compact, which the SETs do not (878 MB against 544 MB; ``_compact_if_grown``)."""
        pending, self._vectors = self._vectors, []
        if not pending:
            return
        started = time.perf_counter()
        try:
            rows = sum(len(ids) for _, _, ids, _ in pending)
            if rows >= VECTOR_REWRITE_AT and self.compact_growth and self._staged is not None:
                by_label: dict[str, dict[str, dict[str, np.ndarray]]] = {}
                for label, prop, ids, vectors in pending:
                    by_label.setdefault(label, {}).setdefault(prop, {}).update(zip(ids, vectors, strict=True))
                if self._rewrite(by_label):
                    return
            for label, prop, ids, vectors in pending:
                CypherStore.set_vectors(self, label, prop, ids, vectors)
        finally:
            self._steps["vectors"] = self._steps.get("vectors", 0.0) + time.perf_counter() - started

    def _compact_if_grown(self) -> None:
        """Rewrite the staged generation compactly when it has grown past ``compact_growth`` times its
        size after the last rewrite, or was never rewritten (docs/freshness.md, "The index does not grow").

        Kùzu 0.11.3 never gives pages back and has no VACUUM: deleted and updated rows leave their old pages in
        the file (as every change to its full-text indexes did, before they moved to cg/graph/lexicon.py), and
        each generation starts as a copy of the last, so requests' index grew from 119 MB to 334 MB over nine
        one-line edits (benchmarks/index_growth.py). The rewrite is Kùzu's own ``EXPORT DATABASE`` (Parquet,
        inside the generation's folder) and a bulk ``COPY`` into a new empty generation. A full run ends with it
        too: its bulk load (``_bulk_load``) copies from a subquery, which Kùzu stores less tightly than what it
        copies from Parquet (Django: 573 MB against 383 MB, for a rewrite of about 8 s). The full-text index (a
        file of its own) is copied as it is. A rewrite that fails leaves the run's generation as it was written,
        and says so in one line."""
        assert self._staged is not None
        if not self.compact_growth:
            return
        self._conn.execute("CHECKPOINT")
        size = self.path.stat().st_size
        rewritten = int(self.get_meta("compact_bytes") or 0)
        if rewritten and size <= self.compact_growth * rewritten:
            return
        self._rewrite()

    def _rewrite(self, vectors: dict[str, dict[str, dict[str, np.ndarray]]] | None = None) -> bool:
        """Export the staged generation and copy it into a new empty one, which replaces it; the rows of
        the node tables in ``vectors`` (label -> property -> id -> vector) get those vectors on the way
        (``_copy_with_vectors``). False when it could not, the staged generation as it was."""
        assert self._staged is not None
        dimension = int(self.get_meta("dimension") or self._dimension or 0)
        export = self._staged.path / "export"
        if not dimension or not _plain_path(export):
            return False  # no vectors yet to type the tables by, or a path no Cypher string may hold as it is
        old = self._staged
        try:
            self._conn.execute("CHECKPOINT")
            _return_freed_memory()  # what the run freed before, for Kùzu's threads to take (``_reopen``)
            self._conn.execute(f"EXPORT DATABASE '{export}' (format='parquet')")
            copies = _copy_statements(export)
            self._close_db()
            _return_freed_memory()
            self._staged = self.generations.stage(None)
            if (old.path / LEXICON).is_file():  # the full-text index stays as it is: the ids do
                shutil.copyfile(old.path / LEXICON, self._staged.path / LEXICON)
            self._open(self._staged.db, read_only=False)
            self._dimension = dimension
            for statement in _schema(dimension):
                self._write(statement)
            for statement in copies:  # Meta's rows among them: the schema version, the model, the dimension
                table, parquet = _copied(statement)
                if vectors and table in vectors:
                    _copy_with_vectors(self, table, parquet, vectors.pop(table), dimension, self.bulk_rows)
                else:
                    self._write(statement)
            if vectors:
                raise StoreError(f"the export holds no {', '.join(vectors)} table")
            self._conn.execute("CHECKPOINT")
            self.set_meta("compact_bytes", str(self.path.stat().st_size))
        except (RuntimeError, OSError, StoreError) as exc:
            log.warning("could not rewrite the index compactly (%s); it stays as written", str(exc).splitlines()[0])
            self._back_to(old, export)
            return False
        except BaseException:  # Ctrl-C: the run discards the generation it is left with; leave it the old one
            self._back_to(old, export)
            raise
        self.generations.discard(old)
        return True

    def _back_to(self, old: Generation, export: Path) -> None:
        """After a rewrite that did not end: the staged generation is ``old`` again, open for writing."""
        self._close_db()
        if self._staged is not old:
            assert self._staged is not None
            self.generations.discard(self._staged)
            self._staged = old
        shutil.rmtree(export, ignore_errors=True)  # not kept inside the generation that becomes current
        self._open(old.db, read_only=False)

    def reset(self) -> None:
        if self._staged is None:
            raise StoreError("internal: the index is emptied only inside a run")
        super().reset()

    def _discard(self) -> None:
        self._vectors = []
        staged, self._staged = self._staged, None
        self._close_db()
        if staged is not None:
            self.generations.discard(staged)

    def close(self) -> None:
        self._close_db()
        if self._copying is not None:  # prepared for a run that never came
            with suppress(Exception):
                self._take_copy(wanted=False)
        if self._staged is not None:  # a run that never ended: its generation is not complete
            self._discard()
        if self._lock is not None:
            self._lock.release()
            self._lock = None


# The columns a kept row may differ in and still be kept, set in place (cypher.MOVE_SYMBOLS, MOVE_CHUNKS).
_MOVES = {"Symbol": ("start_line", "end_line", "blob_sha", "committed_at"), "Chunk": ("start_line", "end_line")}


def _changes(
    stored: list[dict[str, Any]], rows: list[dict[str, Any]], moves: tuple[str, ...]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """A file's new rows against the ones stored (cypher.STORED_*_COLUMNS, vectors as whether one is
    there): the rows to create (new, or changed in a column other than ``moves``), the rows to update
    in place (only ``moves`` may differ: their id and those columns), and the stored ids that are gone.

    A row stays when every stored column is equal, its vectors included: a new row without a vector
    (written before its vectors, ``cg index --embed later``) keeps the stored one, which is the vector of
    that same text; a new row with one where none is stored is created anew (a vector set in place
    costs what a changed text does)."""
    before = {r["id"]: r for r in stored}
    create: list[dict[str, Any]] = []
    move: list[dict[str, Any]] = []
    for row in rows:
        old = before.get(row["id"])
        same = old is not None and all(
            (row.get(column) is None or old[column]) if column in ("embedding", "doc_embedding")
            else row.get(column) == old[column]
            for column in old
            if column not in moves
        )  # fmt: skip
        if old is None or not same:
            create.append(row)
        elif any(row[column] != old[column] for column in moves):
            move.append({"id": row["id"], **{column: row[column] for column in moves}})
    seen = {row["id"] for row in rows}
    return create, move, [i for i in before if i not in seen]


BY_KEY_UP_TO = 32
# From this many vectors on, a run that sets them rewrites its generation with them rather than setting
# them one by one (KuzuIndexStore._write_vectors). Measured on Django's 45,042 definition vectors: SET
# 41 s at 3.6 GB of RSS leaving an 878 MB database, the rewrite 27 s at 1.8 GB leaving 544 MB; a small
# repository's rewrite takes about a second, while a one-file edit's few vectors are SET in milliseconds.
VECTOR_REWRITE_AT = 2000


def _by_key(query: str) -> str:
    """A read of nodes by ``$ids`` as a read of one node by ``$id``."""
    head, found, tail = query.partition(".id IN $ids")
    if not found or ".id IN $ids" in tail:
        raise StoreError(f"internal: not a read of nodes by id: {query}")
    return f"{head}.id = $id{tail}"


def _plain_path(path: Path) -> bool:
    """A path that can stand inside a quoted Cypher string as it is (EXPORT takes no parameter)."""
    return not any(c in str(path) for c in "'\"\\\n")


_PARALLEL = re.compile(r"(, )?parallel=true")


def _copy_statements(export: Path) -> list[str]:
    """The ``COPY`` statements Kùzu wrote beside its export (``copy.cypher``: one per node table and per
    FROM/TO pair of a relationship table, with their column lists), each Parquet file named by its full
    path. Kùzu writes them from cg's own schema, so nothing in them comes from the repository; its
    ``parallel=true`` is an option that COPY from Parquet refuses, so it is dropped."""
    out = []
    for line in (export / "copy.cypher").read_text().splitlines():
        line = line.strip().rstrip(";")
        if line:
            line = line.replace(' FROM "', f' FROM "{export}/', 1)
            out.append(_PARALLEL.sub("", line).replace(" ()", ""))
    return out


def _copy_with_vectors(
    store: KuzuStore,
    table: str,
    parquet: str,
    vectors: dict[str, dict[str, np.ndarray]],
    dimension: int,
    batch: int,
) -> None:
    """Copy the rows of ``parquet`` (a node table's export) into ``table`` with ``vectors`` (property ->
    id -> vector) in place of the exported ones where given, ``batch`` rows with vectors a statement
    (then the rows without any), the database reopened after each (``KuzuStore._reopen``).

    The vectors go in through scratch tables of the new generation, dropped after: the vectors as
    ``.npy`` columns, which Kùzu reads natively (45,000 x 384 in 0.9 s), the ids by parameter, and one
    ``COPY table FROM (LOAD FROM ... OPTIONAL MATCH ...)`` a batch joins them to the exported rows.
    Passing the vectors as query parameters instead cost 47 s and 4.2 GB of RSS for Django's
    definitions (Kùzu converts a parameter list's floats one by one); this way that copy took 12 s at
    1.8 GB, against 41 s and 3.6 GB for the SETs it replaces. (Writing the joined rows to a Parquet
    file first, with ``COPY (...) TO``, is not a way: Kùzu 0.11.3 writes the strings of such a file
    unreadably.)

    Why in batches: Kùzu holds a ``COPY`` from a subquery's whole result in its own heap until the
    database is closed, texts and vectors included; Django's 45,042 definitions in one statement took
    the vectors run from 1.5 to 2.4 GB of RSS. Each batch reads the Parquet file again and keeps the
    rows of its own range of keys, and the reopen hands its heap back."""
    unknown = set(vectors) - set(NODE_VECTORS.get(table, ()))
    if unknown:
        raise StoreError(f"internal: {table} has no vector column {', '.join(sorted(unknown))}")
    head = store._conn.execute(f"LOAD FROM '{parquet}' RETURN * LIMIT 1")
    exported = cast("kuzu.QueryResult", head).get_column_names()  # Kùzu names them `a.id`, ...
    names = {c.rsplit(".", 1)[-1]: c for c in exported}
    if "id" not in names or not set(vectors) <= set(names):
        raise StoreError(f"the export of {table} has the columns {', '.join(exported)}")
    keys = sorted({i for by_id in vectors.values() for i in by_id})
    number = {i: k for k, i in enumerate(keys)}
    scratch = [f"CgScratch{table}Key"]
    with tempfile.TemporaryDirectory(prefix="cg-vectors-") as tmp:
        if not _plain_path(Path(tmp)):
            raise StoreError(f"the temporary folder {tmp} cannot stand in a Cypher string")
        try:
            store._conn.execute(f"CREATE NODE TABLE {scratch[0]}(id STRING PRIMARY KEY, k INT64)")
            for start in range(0, len(keys), batch):
                rows = [{"id": i, "k": start + n} for n, i in enumerate(keys[start : start + batch])]
                store._conn.execute(f"COPY {scratch[0]} FROM (UNWIND $rows AS r RETURN r.id, r.k)", {"rows": rows})
            matches, given = [], {}
            for n, (prop, by_id) in enumerate(sorted(vectors.items())):
                ks, vs = Path(tmp) / f"{n}-k.npy", Path(tmp) / f"{n}-v.npy"
                np.save(ks, np.array([number[i] for i in by_id], dtype=np.int64))
                np.save(vs, np.stack(list(by_id.values())).astype(np.float32, copy=False))
                scratch.append(f"CgScratch{table}Vector{n}")
                store._conn.execute(f"CREATE NODE TABLE {scratch[-1]}(k INT64 PRIMARY KEY, v FLOAT[{dimension}])")
                store._conn.execute(f"COPY {scratch[-1]} FROM ('{ks}', '{vs}') BY COLUMN")
                matches.append(f" OPTIONAL MATCH (v{n}:{scratch[-1]} {{k: key.k}})")
                given[prop] = f"coalesce(v{n}.v, `{names[prop]}`)"
            returned = ", ".join(given.get(c, f"`{names[c]}`") for c in names)
            ranges = [f"key.k >= {start} AND key.k < {start + batch}" for start in range(0, len(keys), batch)]
            for where in [*ranges, "key.k IS NULL"]:
                store._conn.execute(
                    f"COPY {table} ({', '.join(names)}) FROM (LOAD FROM '{parquet}'"
                    f" OPTIONAL MATCH (key:{scratch[0]} {{id: `{names['id']}`}}) WITH * WHERE {where}"
                    f"{''.join(matches)} RETURN {returned})"
                )
                store._reopen()
        finally:
            for name in reversed(scratch):
                with suppress(RuntimeError):
                    store._conn.execute(f"DROP TABLE IF EXISTS {name}")


_COPIED = re.compile(r'COPY `?(\w+)`?(?=[ (]).*? FROM "([^"]+)"')


def _copied(statement: str) -> tuple[str, str]:
    """The table a ``_copy_statements`` statement copies into, and the Parquet file it copies from."""
    found = _COPIED.match(statement)
    if found is None:
        raise StoreError(f"internal: not a COPY from an export: {statement[:80]}")
    return found.group(1), found.group(2)


_CAST_ROW_VECTOR = re.compile(r"CAST\(r\.(\w+) AS FLOAT\[\d+\]\)")


def vector_text(vector: Any) -> str:
    """A vector as the text a ``CAST(... AS FLOAT[n])`` parses: each float32 to nine significant digits,
    which round-trip it exactly."""
    return "[" + ",".join(map("{:.9g}".format, vector)) + "]"


def _vectors_as_text(row: Any, keys: list[str]) -> Any:
    if not isinstance(row, dict):
        return row
    return {k: vector_text(v) if k in keys and isinstance(v, list | np.ndarray) else v for k, v in row.items()}


def _rows(result: kuzu.QueryResult) -> list[list[Any]]:
    rows: list[list[Any]] = []
    while result.has_next():
        rows.append(cast(list[Any], result.get_next()))  # a list unless the result was asked for dicts
    return rows
