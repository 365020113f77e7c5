"""The embedded store's full-text index: SQLite FTS5 in one file beside each Kùzu generation.

Why not Kùzu's own full-text extension, which the embedded store used before: in Kùzu 0.11.3 any change
to a column under a full-text index makes the next CHECKPOINT rewrite that index's tables. Measured on
a copy of Django's index (45k definitions, 36k chunks): a CHECKPOINT with nothing changed took 0.17 s,
after changing one definition's ``search_text`` 1.0 s, after an integer SET on 27 rows 0.21 s. Every
edit of a function changes its text, so a one-file edit of Django paid 1.3-2.0 s of the 5 s it may take
(issue 19), and those rewritten pages were also what grew the database file between compactions.
SQLite's FTS5 updates its b-trees in place for the rows that changed: a few milliseconds. It is in
Python's standard library (no new dependency) and ranks by BM25 like Kùzu's, over the same analyzed
text (cg/lexical.py), so the lexical arm's candidate pools stay about what they were (Kùzu's index also
dropped English stopwords; the question sets' figures moved by at most 0.01, benchmarks/RESULTS.md); the
ranking of those candidates is cg's own, backend-independent BM25 (cg/queries/search.py) in any case.

Layout: ``node`` maps each indexed node (label, id) to an integer rowid, with its path (for deleting a
file's nodes), a chunk's owner and a definition's vectors (``VECTORS``: what ranking reads of a
full-text candidate next, which Kùzu's own full-text index returned with the hit); one FTS5 table per
full-text field (cypher.TEXT_FIELDS) holds the field's text under that rowid, with FTS5's full detail:
without positions (``detail=column`` or ``none``) Django's file was about a tenth smaller (128 MB
against some 140 MB) but ranking by BM25 took 5-15x longer (Django's 45k definitions, "model register
admin site": 137 ms against 25 ms; FTS5's ``bm25`` reads a row's term counts from its position lists).
The file lives inside the generation directory and is copied with it, so a run writes its staged
generation's copy and readers keep the one they opened (cg/graph/generations.py); a reader opens it
read-only. A failed run's writes go with its generation.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from cg.graph.cypher import TEXT_FIELDS
from cg.graph.store import FileWrite, StoreError
from cg.model import Chunk, CommitRecord, DocSection, Symbol

# The FTS5 table of each full-text field (label, property); names are cg's own, never a repository's.
TABLES = {(label, prop): f"fts_{label.lower()}_{prop}" for label, prop in TEXT_FIELDS}
_SCHEMA = [
    "CREATE TABLE IF NOT EXISTS node(rowid INTEGER PRIMARY KEY, label TEXT NOT NULL, id TEXT NOT NULL,"
    " repo TEXT NOT NULL, path TEXT, owner TEXT, embedding BLOB, doc_embedding BLOB, UNIQUE(label, id))",
    "CREATE INDEX IF NOT EXISTS node_path ON node(label, path)",
    *(f"CREATE VIRTUAL TABLE IF NOT EXISTS {t} USING fts5(text)" for t in TABLES.values()),
]
# The vectors kept beside a definition's row too (``Lexicon.vectors``): a full-text candidate's vector
# is what ranking reads next (cg/queries/search.py, _complete_cosines), and Kùzu 0.11.3 reads nodes by a
# list of ids by scanning the table (300 of Django's definitions: 60-160 ms; here 1-3 ms).
VECTORS = ("embedding", "doc_embedding")
_ABSENT = b""  # a row that has no such vector (a lambda, a definition without a docstring); NULL: not known here
_WORD = re.compile(r"[^\W_]+")  # a run of letters and digits: one token to FTS5's unicode61 tokenizer
_BY_LABEL: dict[str, list[str]] = {}
for (_label, _prop), _table in TABLES.items():
    _BY_LABEL.setdefault(_label, []).append(_table)


def match_expression(analyzed_query: str) -> str:
    """An FTS5 query matching any of the analyzed query's tokens (Kùzu's full-text query was a
    disjunction too). The analyzer emits lower-case alphanumeric tokens; anything else splits as FTS5's
    tokenizer splits it, so each quoted token is one word, never a phrase and never FTS5 syntax
    (``AND``, ``NEAR``, ``*``, ``col:``)."""
    tokens = dict.fromkeys(_WORD.findall(analyzed_query))
    return " OR ".join(f'"{token}"' for token in tokens)


class Lexicon:
    """One generation's full-text index. A writer's changes form one transaction, committed by
    ``commit`` (a run's end) or ``close``; a reader's connection is read-only."""

    def __init__(self, path: Path, read_only: bool) -> None:
        self.path = path
        self.read_only = read_only
        self._conn: sqlite3.Connection | None = None

    # -- the connection ----------------------------------------------------------------------------
    def _connection(self) -> sqlite3.Connection:
        if self._conn is not None:
            return self._conn
        try:
            if self.read_only:
                if not self.path.is_file() or self.path.is_symlink():
                    raise StoreError(f"the index at {self.path.parent} has no full-text index; run `cg index`")
                conn = sqlite3.connect(f"{self.path.as_uri()}?mode=ro", uri=True, isolation_level=None)
            else:
                conn = sqlite3.connect(self.path, isolation_level=None)
                # no journal file beside it: a run that fails discards its whole generation, and the
                # generation switch flushes the file (Generations.switch)
                conn.execute("PRAGMA journal_mode=MEMORY")
                conn.execute("PRAGMA synchronous=OFF")
            conn.execute("PRAGMA trusted_schema=OFF")
            if not self.read_only:
                for statement in _SCHEMA:
                    conn.execute(statement)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the full-text index at {self.path}: {exc}") from exc
        self._conn = conn
        return conn

    def _writing(self) -> sqlite3.Connection:
        conn = self._connection()
        if not conn.in_transaction:
            conn.execute("BEGIN")
        return conn

    def commit(self) -> None:
        if self._conn is not None and self._conn.in_transaction:
            self._conn.execute("COMMIT")

    def close(self) -> None:
        if self._conn is not None:
            if not self.read_only:
                self.commit()
            self._conn.close()
            self._conn = None

    # -- writes ------------------------------------------------------------------------------------
    def replace_file(self, repo: str, write: FileWrite) -> None:
        """A source file's definitions and chunks, in place of what the index held of it (nothing when
        ``write.new``: a full run's empty index, or a file new to it), with the definitions' vectors
        when the write has them."""
        conn = self._writing()
        path, new = write.file.path, write.new
        if not new:
            self._delete_at(conn, ("Symbol", "Chunk"), [path])
        self._insert(conn, repo, "Symbol", [(s.id, path, None, s) for s in write.symbols], new)
        self._insert(conn, repo, "Chunk", [(c.id, path, c.owner_id, c) for c in write.chunks], new)
        self._put_vectors(conn, _file_vectors(write))

    def replace_docs(self, repo: str, path: str, sections: list[DocSection], new: bool) -> None:
        conn = self._writing()
        if not new:
            self._delete_at(conn, ("Doc",), [path])
        self._insert(conn, repo, "Doc", [(d.id, path, None, d) for d in sections], new)

    def delete_paths(self, paths: list[str]) -> None:
        if paths:
            self._delete_at(self._writing(), ("Symbol", "Chunk", "Doc"), paths)

    def put_commits(self, repo: str, commits: list[CommitRecord]) -> None:
        self._insert(self._writing(), repo, "Commit", [(c.id, None, None, c) for c in commits], new=False)

    def delete_commits(self, ids: list[str]) -> None:
        if ids:
            self._delete_ids(self._writing(), "Commit", ids)

    def set_vectors(self, label: str, prop: str, ids: list[str], vectors: np.ndarray) -> None:
        """Vectors computed after their rows were written (GraphWriter.set_vectors); kept for
        definitions only (``VECTORS``)."""
        if label == "Symbol" and prop in VECTORS and ids:
            self._put_vectors(self._writing(), {prop: [(_blob(v), i) for i, v in zip(ids, vectors, strict=True)]})

    @staticmethod
    def _put_vectors(conn: sqlite3.Connection, rows: dict[str, list[tuple[bytes | None, str]]]) -> None:
        for prop, values in rows.items():
            assert prop in VECTORS
            conn.executemany(f"UPDATE node SET {prop} = ? WHERE label = 'Symbol' AND id = ?", values)

    def vectors(self, prop: str, ids: list[str]) -> dict[str, np.ndarray | None]:
        """The definitions' ``prop`` vectors known here, by id: a vector, or None for a definition known
        to have none; an id this does not know (a vector computed elsewhere) is left out."""
        assert prop in VECTORS
        query = f"SELECT id, {prop} FROM node WHERE label = 'Symbol' AND id IN (?ids) AND {prop} IS NOT NULL"
        return {
            node_id: np.frombuffer(blob, dtype=np.float32) if blob else None
            for node_id, blob in self._by_ids(query, ids)
        }

    def _by_ids(self, query: str, ids: list[str], params: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
        """The rows of ``query`` for ``ids`` (each once), read a part at a time (SQLite's limit on bound
        values): ``?ids`` in it stands for a part's marks, after the ``params``. An index that cannot be
        read is one line (StoreError)."""
        conn = self._connection()
        for part in _parts(list(dict.fromkeys(ids))):
            try:
                yield from conn.execute(query.replace("?ids", ", ".join("?" * len(part))), (*params, *part))
            except sqlite3.Error as exc:
                raise StoreError(f"the full-text index at {self.path} cannot be read: {exc}") from exc

    def _insert(
        self,
        conn: sqlite3.Connection,
        repo: str,
        label: str,
        rows: list[tuple[str, str | None, str | None, Symbol | Chunk | DocSection | CommitRecord]],
        new: bool,
    ) -> None:
        """Index ``rows`` (id, path, owner, node); unless ``new``, whatever the index holds under their
        ids first goes (an id that moved to another file, a commit written again)."""
        if not new:
            self._delete_ids(conn, label, [r[0] for r in rows])
        fields = [(prop, table) for (lab, prop), table in TABLES.items() if lab == label]
        texts: dict[str, list[tuple[int, str]]] = {table: [] for _, table in fields}
        for node_id, path, owner, node in rows:
            cursor = conn.execute(
                "INSERT INTO node(label, id, repo, path, owner) VALUES (?, ?, ?, ?, ?)",
                (label, node_id, repo, path, owner),
            )
            rowid = cursor.lastrowid
            assert rowid is not None
            for prop, table in fields:
                text = getattr(node, prop)
                if text:
                    texts[table].append((rowid, text))
        for table, values in texts.items():
            if values:
                conn.executemany(f"INSERT INTO {table}(rowid, text) VALUES (?, ?)", values)

    def _delete_at(self, conn: sqlite3.Connection, labels: tuple[str, ...], paths: list[str]) -> None:
        for label in labels:
            self._delete_where(conn, label, "path", paths)

    def _delete_ids(self, conn: sqlite3.Connection, label: str, ids: list[str]) -> None:
        self._delete_where(conn, label, "id", ids)

    def _delete_where(self, conn: sqlite3.Connection, label: str, column: str, values: list[str]) -> None:
        """Delete the ``label`` rows whose ``column`` (``path`` or ``id``) is one of ``values``."""
        assert column in ("path", "id")
        for part in _parts(values):
            marks = ", ".join("?" * len(part))
            query = f"SELECT rowid FROM node WHERE label = ? AND {column} IN ({marks})"
            self._delete_rows(conn, label, [r[0] for r in conn.execute(query, (label, *part))])

    @staticmethod
    def _delete_rows(conn: sqlite3.Connection, label: str, rowids: list[int]) -> None:
        if not rowids:
            return
        params = [(r,) for r in rowids]
        for table in _BY_LABEL[label]:
            conn.executemany(f"DELETE FROM {table} WHERE rowid = ?", params)
        conn.executemany("DELETE FROM node WHERE rowid = ?", params)

    # -- reads -------------------------------------------------------------------------------------
    def search(
        self, repo: str, label: str, prop: str, analyzed_query: str, limit: int
    ) -> list[tuple[str, float, str, str | None]]:
        """The best ``limit`` nodes of ``label`` for the query by BM25 over ``prop``: (id, score, the
        field's text, a chunk's owner), best first; a higher score is better."""
        expression = match_expression(analyzed_query)
        if not expression or limit <= 0:
            return []
        table = TABLES[(label, prop)]
        try:
            # the best ``limit`` by FTS5's own rank first (BM25; it reads no row's text), then their ids
            # and texts: joined before the limit, every match's text was read (50-150 ms on Django)
            rows = self._connection().execute(
                f"SELECT n.id, -hit.rank, t.text, n.owner FROM"
                f" (SELECT rowid, rank FROM {table} WHERE {table} MATCH ? ORDER BY rank LIMIT ?) AS hit"
                f" JOIN node AS n ON n.rowid = hit.rowid JOIN {table} AS t ON t.rowid = hit.rowid"
                " WHERE n.repo = ? ORDER BY hit.rank",
                (expression, limit, repo),
            )
            found = rows.fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"the full-text index at {self.path} cannot be read: {exc}") from exc
        return [(r[0], float(r[1]), r[2], r[3]) for r in found]

    def texts(self, repo: str, label: str, prop: str, ids: list[str]) -> dict[str, str]:
        """The ``prop`` field's text of the nodes of ``ids`` this index holds ("" for a node whose field
        is empty); an id it does not hold is left out."""
        query = (
            f"SELECT n.id, t.text FROM node AS n LEFT JOIN {TABLES[(label, prop)]} AS t ON t.rowid = n.rowid"
            " WHERE n.label = ? AND n.repo = ? AND n.id IN (?ids)"
        )
        return {node_id: text or "" for node_id, text in self._by_ids(query, ids, (label, repo))}

    def count(self, label: str) -> int:
        return int(self._connection().execute("SELECT count(*) FROM node WHERE label = ?", (label,)).fetchone()[0])


def _blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def _file_vectors(write: FileWrite) -> dict[str, list[tuple[bytes | None, str]]]:
    """Per vector property, (vector, id) of the file's definitions that the write settles: with the
    write's vectors, each retrievable definition's vector and ``_ABSENT`` for the others; a definition
    without a docstring has no docstring vector, whatever the write carries. A write before its vectors
    (``cg index --embed later``) settles only those."""
    out: dict[str, list[tuple[bytes | None, str]]] = {"embedding": [], "doc_embedding": []}
    vectors = iter(write.embeddings) if write.embeddings is not None else None
    docs = write.doc_embeddings
    for i, s in enumerate(write.symbols):
        if vectors is not None:
            out["embedding"].append((_blob(next(vectors)) if s.retrievable else _ABSENT, s.id))
        doc = docs[i] if docs is not None else None
        if doc is not None:
            out["doc_embedding"].append((_blob(doc), s.id))
        elif not s.docstring or (docs is not None and write.embeddings is not None):
            out["doc_embedding"].append((_ABSENT, s.id))
    return out


def _parts(values: list[str], size: int = 500) -> Iterator[list[str]]:
    """``values`` in slices small enough for one statement's parameters."""
    for start in range(0, len(values), size):
        yield values[start : start + size]
