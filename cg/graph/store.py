"""The store protocols: the only thing the pipeline and the queries know about storage.

Ingest writes through a ``GraphWriter``, queries read through a ``GraphReader``; ``GraphStore`` is
both. The two backends (Kùzu embedded, Neo4j over Bolt) implement them with the same schema and the
same statements (cg/graph/cypher.py, cg/graph/cypher_store.py), so a query is written once in
``cg/queries`` and runs on either.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol, Self

import numpy as np

from cg.errors import CgError
from cg.model import Chunk, CommitRecord, DocSection, Edge, External, FileRecord, Symbol

# Bumped whenever the tables or what the extractors emit change (6: Python module constants; 7: a
# repository key on every node; 8: DECORATES edges, Python lambdas as Symbols, decorators called by the
# defining scope; 9: a Symbol's string literals as a full-text field of their own; 10: the lexical
# analyzer stems words, cg/lexical.py, so an older index's full-text fields no longer match what a
# query looks for; 11: Python attribute assignments, whose property setters get CALLS edges; 12: the
# embedded store's full-text index in SQLite beside the database, cg/graph/lexicon.py): an index
# from an older cg is rebuilt by `cg index` (it is derived data, and the
# embedding cache makes the rebuild cheap) and refused with one line by queries.
SCHEMA_VERSION = "12"
SYMBOL_FIELDS = (
    "id",
    "name",
    "qualname",
    "kind",
    "path",
    "start_line",
    "end_line",
    "signature",
    "docstring",
    "text",
    "header",
    "search_text",
    "literals",
    "parent_id",
)
CHUNK_FIELDS = ("id", "owner_id", "kind", "path", "start_line", "end_line", "text", "search_text")
# The fields a query needs to describe a hit without pulling the code itself.
SUMMARY_FIELDS = (
    "id",
    "name",
    "qualname",
    "kind",
    "path",
    "start_line",
    "end_line",
    "signature",
    "docstring",
    "parent_id",
    "file_kind",
)


def file_row(rec: FileRecord) -> dict[str, Any]:
    """A File node as a Cypher parameter map (its id is its path)."""
    return {
        "id": rec.path,
        "language": rec.language,
        "kind": rec.kind,
        "blob_sha": rec.blob_sha,
        "loc": rec.loc,
        "module": rec.module,
        "committed_at": rec.committed_at,
    }


def edge_row(e: Edge) -> dict[str, Any]:
    """One edge as a Cypher parameter map (both stores write the same properties)."""
    return {
        "src": e.src,
        "dst": e.dst,
        "line": e.line,
        "resolved_by": e.resolved_by,
        "confidence": e.confidence,
        "candidates": e.candidates,
    }


class StoreError(CgError, RuntimeError):
    """A storage failure a user can act on (server down, bad Cypher): a one-line message."""


class ServerLost(StoreError):
    """The database server went away mid-command: one line; nothing more is asked of it."""


class WriterBusy(StoreError):
    """Another run is writing this repository's index and did not finish within the wait: one line
    naming it, exit 75 (EX_TEMPFAIL: try again later), on both stores."""

    exit_code = 75


@dataclass
class FileWrite:
    """One file's nodes, ready to store; embeddings line up with the retrievable ``symbols`` (a lambda has
    no vector: ``Symbol.retrievable``)."""

    file: FileRecord
    symbols: list[Symbol]
    embeddings: np.ndarray | None  # None: written before its vectors (they follow, GraphWriter.set_vectors)
    externals: list[External] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)
    chunk_embeddings: np.ndarray | None = None
    doc_embeddings: list[np.ndarray | None] | None = None  # per symbol; None where it has no docstring
    # the store holds nothing of this file (a full run's empty graph, or a file new to the index): what
    # it held need not be looked for and deleted first. On Kùzu each of those deletes finds the file's
    # nodes by scanning the label (no secondary index), so a full run of N files cost O(N^2): Django's
    # write stage took over 20 minutes.
    new: bool = False

    def symbol_rows(self) -> list[dict[str, Any]]:
        """One parameter map per symbol (SYMBOL_FIELDS, the file's metadata the symbol inherits, the
        embedding, None for a symbol that is not retrievable, and the docstring's embedding)."""
        docs = self.doc_embeddings or [None] * len(self.symbols)
        inherited = {
            "language": self.file.language,
            "file_kind": self.file.kind,
            "blob_sha": self.file.blob_sha,
            "committed_at": self.file.committed_at,
        }
        later = self.embeddings is None
        vectors = iter(self.embeddings if self.embeddings is not None else ())
        rows = [
            {
                **{f: getattr(s, f) for f in SYMBOL_FIELDS},
                **inherited,
                "embedding": vector_param(next(vectors)) if s.retrievable and not later else None,
                "doc_embedding": vector_param(doc),
            }
            for s, doc in zip(self.symbols, docs, strict=True)
        ]
        if next(vectors, None) is not None:
            raise ValueError(f"{self.file.path}: more symbol vectors than retrievable symbols")
        return rows

    def chunk_rows(self) -> list[dict[str, Any]]:
        vectors = self.chunk_embeddings if self.chunk_embeddings is not None else [None] * len(self.chunks)
        return [
            {**{f: getattr(c, f) for f in CHUNK_FIELDS}, "embedding": vector_param(vec)}
            for c, vec in zip(self.chunks, vectors, strict=True)
        ]


def vector_param(vector: np.ndarray | None) -> list[float] | None:
    """A vector as a Cypher parameter (a list of floats); None stays None (a node whose vector follows)."""
    return None if vector is None else [float(x) for x in vector]


def vector_rows(n: int, embeddings: np.ndarray | None) -> list[np.ndarray | None]:
    """``n`` vectors to lay beside ``n`` rows: ``embeddings``' rows, or ``n`` Nones when they follow later."""
    return list(embeddings) if embeddings is not None else [None] * n


@dataclass(frozen=True)
class CallRow:
    """One CALLS edge seen from a node: ``other`` is the caller (direction 'in') or callee ('out')."""

    src: str
    dst: str
    line: int
    resolved_by: str
    other: dict[str, Any]  # SUMMARY_FIELDS of the other end; External ends carry id/name and kind
    other_label: str


def external_rows(externals: Iterable[External]) -> list[dict[str, Any]]:
    """One parameter row per distinct External id. Kùzu 0.11.3 mis-assigns the SET values of an
    ``UNWIND ... MERGE`` whose rows repeat a key of a node it creates (another row's name lands on
    it; reproduced in tests/graph/test_store_conformance.py), so rows must never repeat an id."""
    rows: dict[str, dict[str, Any]] = {}
    for e in externals:
        rows.setdefault(e.id, {"id": e.id, "name": e.name, "resolved": e.resolved})
    return list(rows.values())


def doc_rows(sections: list[DocSection], embeddings: np.ndarray | None) -> list[dict[str, Any]]:
    """One parameter map per doc section (both stores write the same properties)."""
    return [
        {
            "id": d.id,
            "path": d.path,
            "title": d.title,
            "heading": " > ".join(d.heading_path),
            "start_line": d.start_line,
            "end_line": d.end_line,
            "text": d.text,
            "search_text": d.search_text,
            "embedding": vector_param(vec),
        }
        for d, vec in zip(sections, vector_rows(len(sections), embeddings), strict=True)
    ]


def commit_rows(commits: list[CommitRecord], embeddings: np.ndarray | None) -> list[dict[str, Any]]:
    """One parameter map per commit; ``files`` is how many files it touched."""
    return [
        {
            "id": c.id,
            "short": c.short,
            "author": c.author,
            "committed_at": c.committed_at,
            "files": len({path for path, _ in c.touches}),
            "subject": c.subject,
            "message": c.message,
            "search_text": c.search_text,
            "embedding": vector_param(vec),
        }
        for c, vec in zip(commits, vector_rows(len(commits), embeddings), strict=True)
    ]


def grouped(pairs: Sequence[Sequence[Any]]) -> dict[str, list[str]]:
    """(key, value) rows -> key -> values, in row order."""
    out: dict[str, list[str]] = {}
    for key, value in pairs:
        out.setdefault(key, []).append(value)
    return out


def touching_by_symbol(rows: list[list[Any]], limit: int) -> dict[str, list[dict[str, Any]]]:
    """(symbol id, commit id, short, author, committed_at, subject) rows, newest first -> per symbol,
    its ``limit`` newest commits."""
    out: dict[str, list[dict[str, Any]]] = {}
    for sid, cid, short, author, when, subject in rows:
        bucket = out.setdefault(sid, [])
        if len(bucket) < limit:
            bucket.append(
                {"id": cid, "short": short, "author": author, "committed_at": int(when or 0), "subject": subject}
            )
    return out


class StoreHandle(Protocol):
    """What every open store offers, writer or reader: its name, what it holds (metadata, file shas,
    counts), and closing (``with open_store(...) as store:`` closes it too)."""

    backend: str
    repo_key: str  # the repository whose nodes this store reads and writes (one Neo4j database holds many)

    def get_meta(self, key: str) -> str | None: ...
    def file_shas(self) -> dict[str, str]:
        """path -> blob_sha of every stored file (what ingest and `cg status` compare the tree with)."""

    def stats(self) -> dict[str, int]:
        """How many nodes of each label and edges of each type the graph holds."""

    def outdated(self) -> bool:
        """Whether a later index run replaced what this handle reads (an embedded reader keeps the
        generation it opened; a server's store is always the live graph)."""

    def close(self) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(self, *exc: object) -> None: ...


class GraphWriter(StoreHandle, Protocol):
    """What ingest calls: the schema, the nodes and edges of files, docs and history, and what is stored."""

    def ensure_schema(self, dimension: int) -> None: ...
    def reset(self) -> None:
        """Remove this repository's graph (on Neo4j, the other repositories' stay)."""

    def lease(self, wait: float = 0.0) -> AbstractContextManager[None]:
        """Hold the repository for one writer while the block runs; a second writer gets a one-line
        CgError (after up to ``wait`` seconds of polling)."""

    def set_meta(self, key: str, value: str) -> None: ...

    def run_steps(self) -> dict[str, float]:
        """Seconds the last ``run`` spent on the store's own steps around the statements, by step (on
        Kùzu: copying the generation, compacting it, switching it in); empty where there are none."""

    def run(self, full: bool, dimension: int | None = None) -> AbstractContextManager[None]:
        """One index run's writes, which readers see all at once when the block ends without an
        exception, or not at all: on Kùzu a new generation switched in (cg/graph/generations.py), on
        Neo4j one transaction. ``full`` starts from an empty graph; ``dimension`` ensures the schema
        for vectors of that width first. Reads inside the block see the run's own writes."""

    def prepare(self, full: bool, dimension: int) -> None:
        """Make ready what the next ``run(full, dimension)`` would start with (on Kùzu: the run's
        generation and its schema), so that work overlaps what the caller runs meanwhile (the precise
        pass's indexers); the run then starts from it. Nothing on Neo4j, whose run is a transaction
        and must not be held open while the caller computes."""

    def write_file(self, write: FileWrite) -> None:
        """Upsert the file and its symbols; drop its symbols that are gone and every edge leaving
        the file or its symbols (the caller then writes the fresh edges)."""

    def write_edges(self, edges: list[Edge], externals: Iterable[External] = ()) -> None:
        """Create these edges (their ends must exist; ``externals`` are upserted first)."""

    def delete_files(self, paths: list[str]) -> None:
        """Remove the files with their symbols, chunks, doc sections and every edge touching them."""

    def delete_edges(self, paths: list[str]) -> None:
        """Remove every edge leaving these files or their symbols (before re-resolving them)."""

    def prune_externals(self) -> int:
        """Delete External nodes nothing points to any more; returns how many."""

    def write_docs(
        self, path: str, sections: list[DocSection], embeddings: np.ndarray | None, new: bool = False
    ) -> None:
        """Upsert a document's sections; its sections that are gone are removed (unless ``new``: the
        store holds none of this document's)."""

    def write_mentions(self, paths: list[str], pairs: list[tuple[str, str]]) -> None:
        """Replace the MENTIONS edges of the sections of ``paths`` by (doc id, symbol id) ``pairs``."""

    def write_commits(self, commits: list[CommitRecord], embeddings: np.ndarray | None) -> None: ...
    def set_vectors(self, label: str, prop: str, ids: list[str], vectors: np.ndarray) -> None:
        """Set the vectors of nodes written without them (``label.prop`` one of cypher.VECTOR_PROPS)."""

    def delete_commits(self, ids: list[str]) -> None: ...
    def commit_ids(self) -> set[str]: ...
    def write_touches(self, pairs: list[tuple[str, str, str]]) -> None:
        """(commit id, "File" or "Symbol", target id) TOUCHES edges; idempotent; missing targets skipped."""


class GraphReader(StoreHandle, Protocol):
    """What queries call: search candidates, nodes by id, and the traversals flow and impact are built on."""

    def commits_touching(self, ids: list[str], limit: int = 5) -> dict[str, list[dict[str, Any]]]:
        """Symbol id -> its newest commits (id, short, author, committed_at, subject)."""

    def docs_mentioning(self, ids: list[str]) -> dict[str, list[str]]:
        """Symbol id -> ids of the doc sections that name it (MENTIONS)."""

    def nodes(self, label: str, ids: list[str]) -> dict[str, dict[str, Any]]:
        """Doc or Commit nodes by id, every property but the embedding."""

    def fulltext(
        self, analyzed_query: str, limit: int, label: str = "Symbol", field: str = "search_text"
    ) -> list[tuple[str, float]]:
        """Candidates from the full-text index of ``label`` (Symbol, Chunk, Doc or Commit) over ``field``
        (``search_text``, or a Symbol's string ``literals``)."""

    def vector(
        self, embedding: np.ndarray, limit: int, label: str = "Symbol", prop: str = "embedding"
    ) -> list[tuple[str, float]]:
        """Candidates by cosine over ``label.prop`` (Symbol.embedding, Symbol.doc_embedding, Chunk.embedding)."""

    def chunk_owners(self, ids: list[str]) -> dict[str, str]:
        """Chunk id -> the symbol it belongs to."""

    def symbols(self, ids: list[str], with_text: bool = True) -> dict[str, dict[str, Any]]:
        """Symbol id -> SUMMARY_FIELDS (and its text and header when ``with_text``)."""

    def lexical_docs(self, ids: list[str], label: str = "Symbol", field: str = "search_text") -> dict[str, str]:
        """The analyzed ``field`` of these nodes (for backend-independent BM25 ranking)."""

    def embeddings(self, ids: list[str], label: str = "Symbol", prop: str = "embedding") -> dict[str, np.ndarray]:
        """Stored vectors of these nodes, float32 (for exact re-scoring of vector candidates)."""

    def find_symbols(self, ref: str, limit: int = 10) -> list[dict[str, Any]]:
        """SUMMARY_FIELDS of the symbols whose id, qualname, name or qualname suffix is ``ref``."""

    def classes_named(self, names: list[str]) -> list[dict[str, Any]]:
        """SUMMARY_FIELDS of the classes (and other containers: structs, interfaces) whose name is one of
        ``names``, exactly: one query for the words of a question (``_spelled_members``)."""

    def test_functions(self) -> list[dict[str, Any]]:
        """SUMMARY_FIELDS of every function and method in a test file (fixtures and tests: what
        ``cg impact`` matches fixture parameters against)."""

    def symbol_names(self) -> list[str]:
        """The qualified names of every definition but lambdas, sorted (for "did you mean")."""

    def calls(self, ids: list[str], direction: str) -> list[CallRow]:
        """CALLS edges into these symbols ('in') or out of them ('out')."""

    def caller_counts(self, ids: list[str]) -> dict[str, int]:
        """How many distinct symbols call each of these (ids nobody calls are absent): a hub measure."""

    def inherits(self, ids: list[str], direction: str) -> list[tuple[str, str]]:
        """(subclass, base) pairs of in-repo INHERITS edges: the bases of ``ids`` ('out') or their
        direct subclasses ('in')."""

    def decorators(self, ids: list[str]) -> list[tuple[str, str, int]]:
        """(decorator, decorated, line) for the DECORATES edges into these symbols: the in-repo decorators
        that wrap them."""

    def members(self, ids: list[str]) -> list[dict[str, Any]]:
        """SUMMARY_FIELDS of the definitions directly inside these (a class's methods)."""

    def importers(self, ids: list[str]) -> list[tuple[str, str, int]]:
        """(importing file, imported node id, line) for IMPORTS edges into these Symbols or Files."""

    def symbols_at(self, path: str, line: int) -> list[dict[str, Any]]:
        """SUMMARY_FIELDS of the definitions in ``path`` whose lines contain ``line``, innermost first."""

    def cypher(
        self, query: str, params: dict[str, Any] | None = None, write: bool = False
    ) -> tuple[list[str], list[list[Any]]]:
        """Run a user's Cypher: (columns, rows); read-only unless ``write``; errors as StoreError."""

    def repositories(self) -> list[str]:
        """The keys of the repositories with a graph in this database (Kùzu: this one)."""

    def for_repo(self, key: str) -> GraphReader:
        """A reader of repository ``key`` in the same database, over this connection."""


class GraphStore(GraphWriter, GraphReader, Protocol):
    """Both halves, for code that indexes and then asks (the CLI, tests, benchmarks)."""
