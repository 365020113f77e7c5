"""The embedded default store: Kùzu on disk under ``<repo>/.cg/graph.kuzu``.

Vector search is an exact cosine scan inside Kùzu (``array_cosine_similarity``) rather than its HNSW
index: on these machines building HNSW over 50k vectors took 322 s, while the exact scan answers in
tens of milliseconds with no build at all and is never stale. ``benchmarks/vector_search.py``
measures both (and numpy) on each run; see benchmarks/RESULTS.md. Full-text search is Kùzu's fts
extension over the analyzer's ``search_text`` (see cg/lexical.py), which stays current on writes.
Both extensions ship with the kuzu 0.11.3 wheel and load offline.
"""

from __future__ import annotations

import shutil
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from cg.config import repo_key_for
from cg.graph.cypher import searchable, vector_prop
from cg.graph.cypher_store import CypherStore, Statement
from cg.graph.store import SCHEMA_VERSION, StoreError

if TYPE_CHECKING:
    import kuzu

_FTS_INDEX = {"Symbol": "symbol_fts", "Chunk": "chunk_fts", "Doc": "doc_fts", "Commit": "commit_fts"}


def _schema(dimension: int) -> list[str]:
    return [
        "CREATE NODE TABLE IF NOT EXISTS Meta(key STRING PRIMARY KEY, repo STRING, value STRING)",
        "CREATE NODE TABLE IF NOT EXISTS File(id STRING PRIMARY KEY, repo STRING, path STRING, language STRING,"
        " kind STRING, blob_sha STRING, loc INT64, module STRING, committed_at INT64)",
        "CREATE NODE TABLE IF NOT EXISTS Symbol(id STRING PRIMARY KEY, repo STRING, name STRING, qualname STRING,"
        " kind STRING, path STRING, start_line INT64, end_line INT64, signature STRING, docstring STRING, text STRING,"
        f" header STRING, search_text STRING, parent_id STRING, language STRING, file_kind STRING,"
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
        "CREATE REL TABLE IF NOT EXISTS PART_OF(FROM Chunk TO Symbol)",
        "CREATE REL TABLE IF NOT EXISTS MENTIONS(FROM Doc TO Symbol)",
        "CREATE REL TABLE IF NOT EXISTS TOUCHES(FROM Commit TO File, FROM Commit TO Symbol)",
    ]


class KuzuStore(CypherStore):
    backend = "kuzu"
    batch_rows = 2000

    def __init__(self, path: Path, read_only: bool = False, repo_key: str | None = None) -> None:
        """The database at ``path`` (``<repo>/.cg/graph.kuzu``) for the repository ``repo_key``
        (default: the key of the repository around ``path``, as the settings would derive it)."""
        import kuzu

        super().__init__(repo_key if repo_key is not None else repo_key_for(path.parent.parent))
        self.path = path
        self.read_only = read_only
        if read_only and not path.exists():
            raise StoreError(f"no index at {path.parent}; run `cg index` first")
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = kuzu.Database(str(path), read_only=read_only)
        except RuntimeError as exc:
            raise StoreError(f"cannot open the index at {path}: {exc}") from exc
        self._conn = kuzu.Connection(self._db)
        for extension in ("fts", "vector"):
            self._conn.execute(f"LOAD EXTENSION {extension}")
        if read_only and (self._unkeyed() or self.get_meta("schema") != SCHEMA_VERSION):
            other = None if self._unkeyed() else self._built_for()
            self.close()
            if other is not None and other != self.repo_key:
                raise StoreError(
                    f"the index in {path.parent.parent} was built for repository key {other!r}, not"
                    f" {self.repo_key!r} (--repo-key / CG_REPO_KEY); run `cg index` to rebuild it"
                )
            raise StoreError(
                f"the index in {path.parent.parent} was built by an older cg; run `cg index` to rebuild it"
            )

    # -- primitives ------------------------------------------------------------------------------
    def _execute(self, query: str, params: dict[str, Any] | None = None) -> kuzu.QueryResult:
        result = self._conn.execute(query, self._params(query, params))
        if isinstance(result, list):  # Kùzu answers `a; b` with one result per statement
            raise StoreError("one Cypher statement at a time")
        return result

    def _read(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        return _rows(self._execute(query, params))

    def _write(self, query: str, params: dict[str, Any] | None = None) -> None:
        self._read(query, params)

    def _write_all(self, statements: list[Statement]) -> None:
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

    def _has(self, label: str) -> bool:
        return label in self._tables()

    def _tables(self) -> set[str]:
        return {row[1] for row in self._read("CALL show_tables() RETURN *")}

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
        existing = {row[1] for row in self._read("CALL show_indexes() RETURN *")}
        for label, index in _FTS_INDEX.items():
            if index not in existing:
                self._write(f"CALL CREATE_FTS_INDEX('{label}', '{index}', ['search_text'], stemmer := 'none')")
        self.set_meta("dimension", str(dimension))
        self.set_meta("schema", SCHEMA_VERSION)

    def lease(self, wait: float = 0.0) -> AbstractContextManager[None]:
        """Nothing to take: Kùzu's own file lock already lets one process at a time open the database
        for writing, and the database holds this repository alone."""
        return nullcontext()

    def reset(self) -> None:
        self._conn.close()
        self._db.close()
        if self.path.is_dir():
            shutil.rmtree(self.path)
        elif self.path.exists():
            self.path.unlink()
            wal = self.path.with_name(self.path.name + ".wal")
            if wal.exists():
                wal.unlink()
        self.__init__(self.path, repo_key=self.repo_key)  # type: ignore[misc]

    # -- reads -----------------------------------------------------------------------------------
    def fulltext(self, analyzed_query: str, limit: int, label: str = "Symbol") -> list[tuple[str, float]]:
        if not analyzed_query.strip():
            return []
        rows = self._read(
            f"CALL QUERY_FTS_INDEX('{searchable(label)}', '{_FTS_INDEX[label]}', $q) WITH node, score"
            " WHERE node.repo = $repo RETURN node.id, score ORDER BY score DESC LIMIT $k",
            {"q": analyzed_query, "k": limit},
        )
        return [(r[0], float(r[1])) for r in rows]

    def vector(
        self, embedding: np.ndarray, limit: int, label: str = "Symbol", prop: str = "embedding"
    ) -> list[tuple[str, float]]:
        vector_prop(label, prop)
        dim = int(embedding.shape[0])
        rows = self._read(
            f"MATCH (n:{label}) WHERE n.repo = $repo AND n.{prop} IS NOT NULL"
            f" WITH n, array_cosine_similarity(n.{prop}, CAST($q AS FLOAT[{dim}])) AS score"
            " RETURN n.id, score ORDER BY score DESC LIMIT $k",
            {"q": embedding.astype(float).tolist(), "k": limit},
        )
        return [(r[0], float(r[1])) for r in rows]

    def cypher(
        self, query: str, params: dict[str, Any] | None = None, write: bool = False
    ) -> tuple[list[str], list[list[Any]]]:
        if not write and not self.read_only:
            raise StoreError("internal: read-only Cypher needs a store opened read_only")
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
        self._conn.close()
        self._db.close()


def _rows(result: kuzu.QueryResult) -> list[list[Any]]:
    rows: list[list[Any]] = []
    while result.has_next():
        rows.append(cast(list[Any], result.get_next()))  # a list unless the result was asked for dicts
    return rows
