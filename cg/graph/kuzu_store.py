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
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from cg.graph.store import (
    SCHEMA_VERSION,
    SUMMARY_FIELDS,
    CallRow,
    FileWrite,
    StoreError,
    commit_rows,
    doc_rows,
    edge_row,
    external_rows,
    grouped,
    touching_by_symbol,
)
from cg.model import CommitRecord, DocSection, Edge, External

_FTS_INDEX = {"Symbol": "symbol_fts", "Chunk": "chunk_fts", "Doc": "doc_fts", "Commit": "commit_fts"}
_LABELS = ("Symbol", "Chunk", "Doc", "Commit")
_VECTOR_PROPS = {
    ("Symbol", "embedding"),
    ("Symbol", "doc_embedding"),
    ("Chunk", "embedding"),
    ("Doc", "embedding"),
    ("Commit", "embedding"),
}


def _schema(dimension: int) -> list[str]:
    return [
        "CREATE NODE TABLE IF NOT EXISTS Meta(key STRING PRIMARY KEY, value STRING)",
        "CREATE NODE TABLE IF NOT EXISTS File(id STRING PRIMARY KEY, path STRING, language STRING, kind STRING,"
        " blob_sha STRING, loc INT64, module STRING, committed_at INT64)",
        "CREATE NODE TABLE IF NOT EXISTS Symbol(id STRING PRIMARY KEY, name STRING, qualname STRING, kind STRING,"
        " path STRING, start_line INT64, end_line INT64, signature STRING, docstring STRING, text STRING,"
        f" header STRING, search_text STRING, parent_id STRING, language STRING, file_kind STRING,"
        f" blob_sha STRING, committed_at INT64, embedding FLOAT[{dimension}], doc_embedding FLOAT[{dimension}])",
        "CREATE NODE TABLE IF NOT EXISTS Chunk(id STRING PRIMARY KEY, owner_id STRING, kind STRING, path STRING,"
        f" start_line INT64, end_line INT64, text STRING, search_text STRING, embedding FLOAT[{dimension}])",
        "CREATE NODE TABLE IF NOT EXISTS External(id STRING PRIMARY KEY, name STRING, resolved BOOLEAN)",
        "CREATE NODE TABLE IF NOT EXISTS Doc(id STRING PRIMARY KEY, path STRING, title STRING, heading STRING,"
        f" start_line INT64, end_line INT64, text STRING, search_text STRING, embedding FLOAT[{dimension}])",
        "CREATE NODE TABLE IF NOT EXISTS Commit(id STRING PRIMARY KEY, short STRING, author STRING,"
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


_UPSERT_FILE = (
    "MERGE (f:File {id: $id}) SET f.path = $id, f.language = $language, f.kind = $kind,"
    " f.blob_sha = $blob_sha, f.loc = $loc, f.module = $module, f.committed_at = $committed_at"
)
_DELETE_STALE_SYMBOLS = "MATCH (s:Symbol) WHERE s.path = $path AND NOT s.id IN $keep DETACH DELETE s"
_DELETE_FILE_EDGES = [
    "MATCH (f:File {id: $path})-[r]->() DELETE r",
    "MATCH (s:Symbol)-[r]->() WHERE s.path = $path DELETE r",
]
_SUMMARY = ", ".join(f"n.{f} AS {f}" for f in SUMMARY_FIELDS)


def _label(label: str) -> str:
    if label not in _LABELS:
        raise ValueError(f"not a searchable label: {label!r}")
    return label


def _vector_prop(label: str, prop: str) -> None:
    if (label, prop) not in _VECTOR_PROPS:
        raise ValueError(f"no vectors at {label}.{prop}")


class KuzuStore:
    backend = "kuzu"

    def __init__(self, path: Path, read_only: bool = False) -> None:
        import kuzu

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
        self._dimension: int | None = None
        if read_only and self.get_meta("schema") != SCHEMA_VERSION:
            self.close()
            raise StoreError(
                f"the index in {path.parent.parent} was built by an older cg; run `cg index` to rebuild it"
            )

    # -- plumbing --------------------------------------------------------------------------------
    def _run(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        result = self._conn.execute(query, params or {})
        rows: list[list[Any]] = []
        while result.has_next():
            rows.append(result.get_next())
        return rows

    def _tables(self) -> set[str]:
        return {row[1] for row in self._run("CALL show_tables() RETURN *")}

    def ensure_schema(self, dimension: int) -> None:
        self._dimension = dimension
        if "Meta" in self._tables() and self.get_meta("schema") != SCHEMA_VERSION:
            self.reset()  # built by an older cg: start over
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
            self._run(statement)
        existing = {row[1] for row in self._run("CALL show_indexes() RETURN *")}
        for label, index in _FTS_INDEX.items():
            if index not in existing:
                self._run(f"CALL CREATE_FTS_INDEX('{label}', '{index}', ['search_text'], stemmer := 'none')")
        self.set_meta("dimension", str(dimension))
        self.set_meta("schema", SCHEMA_VERSION)

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
        self.__init__(self.path)  # type: ignore[misc]

    def get_meta(self, key: str) -> str | None:
        if "Meta" not in self._tables():
            return None
        rows = self._run("MATCH (m:Meta {key: $key}) RETURN m.value", {"key": key})
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        self._run("MERGE (m:Meta {key: $key}) SET m.value = $value", {"key": key, "value": value})

    # -- writes ----------------------------------------------------------------------------------
    def write_file(self, write: FileWrite) -> None:
        rec = write.file
        dim = self._dimension or int(write.embeddings.shape[1])
        self._conn.execute("BEGIN TRANSACTION")
        try:
            self._run(
                _UPSERT_FILE,
                {
                    "id": rec.path,
                    "language": rec.language,
                    "kind": rec.kind,
                    "blob_sha": rec.blob_sha,
                    "loc": rec.loc,
                    "module": rec.module,
                    "committed_at": rec.committed_at,
                },
            )
            self._run(_DELETE_STALE_SYMBOLS, {"path": rec.path, "keep": [s.id for s in write.symbols]})
            for statement in _DELETE_FILE_EDGES:
                self._run(statement, {"path": rec.path})
            rows = write.symbol_rows()
            if rows:
                self._run(
                    "UNWIND $rows AS r MERGE (s:Symbol {id: r.id}) SET s.name = r.name, s.qualname = r.qualname,"
                    " s.kind = r.kind, s.path = r.path, s.start_line = r.start_line, s.end_line = r.end_line,"
                    " s.signature = r.signature, s.docstring = r.docstring, s.text = r.text, s.header = r.header,"
                    " s.search_text = r.search_text, s.parent_id = r.parent_id, s.language = r.language,"
                    " s.file_kind = r.file_kind, s.blob_sha = r.blob_sha, s.committed_at = r.committed_at,"
                    f" s.embedding = CAST(r.embedding AS FLOAT[{dim}]), s.doc_embedding = NULL",
                    {"rows": [{k: v for k, v in r.items() if k != "doc_embedding"} for r in rows]},
                )
                docs = [{"id": r["id"], "doc": r["doc_embedding"]} for r in rows if r["doc_embedding"] is not None]
                if docs:  # a list param mixing vectors and nulls does not cast; set the docstrings' apart
                    self._run(
                        "UNWIND $rows AS r MATCH (s:Symbol {id: r.id})"
                        f" SET s.doc_embedding = CAST(r.doc AS FLOAT[{dim}])",
                        {"rows": docs},
                    )
            # chunks are upserted in place and only the stale ones deleted: deleting and re-creating
            # every chunk of the file in one transaction crashes Kùzu 0.11.3 (a segfault, seen here)
            chunks = write.chunk_rows()
            self._run(
                "MATCH (c:Chunk) WHERE c.path = $path AND NOT c.id IN $keep DETACH DELETE c",
                {"path": rec.path, "keep": [c["id"] for c in chunks]},
            )
            self._run("MATCH (c:Chunk)-[p:PART_OF]->() WHERE c.path = $path DELETE p", {"path": rec.path})
            if chunks:
                self._run(
                    "UNWIND $rows AS r MERGE (c:Chunk {id: r.id}) SET c.owner_id = r.owner_id, c.kind = r.kind,"
                    " c.path = r.path, c.start_line = r.start_line, c.end_line = r.end_line, c.text = r.text,"
                    f" c.search_text = r.search_text, c.embedding = CAST(r.embedding AS FLOAT[{dim}])",
                    {"rows": chunks},
                )
                self._run(
                    "UNWIND $rows AS r MATCH (c:Chunk {id: r.id}), (s:Symbol {id: r.owner_id})"
                    " CREATE (c)-[:PART_OF]->(s)",
                    {"rows": [{"id": c["id"], "owner_id": c["owner_id"]} for c in chunks]},
                )
            externals = external_rows(write.externals)
            if externals:
                self._run(
                    "UNWIND $rows AS r MERGE (e:External {id: r.id}) SET e.name = r.name, e.resolved = r.resolved",
                    {"rows": externals},
                )
            self._conn.execute("COMMIT")
        except Exception:
            try:
                self._conn.execute("ROLLBACK")
            except RuntimeError:
                pass  # Kùzu already rolled the failed transaction back
            raise

    def write_edges(self, edges: list[Edge], externals: Iterable[External] = ()) -> None:
        rows_ext = external_rows(externals)
        if rows_ext:
            self._run(
                "UNWIND $rows AS r MERGE (e:External {id: r.id}) SET e.name = r.name, e.resolved = r.resolved",
                {"rows": rows_ext},
            )
        groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for e in edges:
            groups.setdefault((e.type, e.src_label, e.dst_label), []).append(edge_row(e))
        props = {
            "DEFINES": "{line: r.line}",
            "IMPORTS": "{line: r.line, resolved_by: r.resolved_by}",
            "CALLS": "{line: r.line, resolved_by: r.resolved_by, confidence: r.confidence, candidates: r.candidates}",
            "INHERITS": "{line: r.line, resolved_by: r.resolved_by}",
        }
        for (rel, src_label, dst_label), rows in groups.items():
            for start in range(0, len(rows), 2000):
                self._run(
                    f"UNWIND $rows AS r MATCH (a:{src_label} {{id: r.src}}), (b:{dst_label} {{id: r.dst}})"
                    f" CREATE (a)-[:{rel} {props[rel]}]->(b)",
                    {"rows": rows[start : start + 2000]},
                )

    def delete_files(self, paths: list[str]) -> None:
        if not paths:
            return
        self._run("MATCH (c:Chunk) WHERE c.path IN $paths DETACH DELETE c", {"paths": paths})
        self._run("MATCH (s:Symbol) WHERE s.path IN $paths DETACH DELETE s", {"paths": paths})
        self._run("MATCH (d:Doc) WHERE d.path IN $paths DETACH DELETE d", {"paths": paths})
        self._run("MATCH (f:File) WHERE f.id IN $paths DETACH DELETE f", {"paths": paths})

    def delete_edges(self, paths: list[str]) -> None:
        for path in paths:
            for statement in _DELETE_FILE_EDGES:
                self._run(statement, {"path": path})

    def prune_externals(self) -> int:
        rows = self._run("MATCH (e:External) WHERE NOT EXISTS { MATCH ()-[]->(e) } RETURN e.id")
        if rows:
            self._run("MATCH (e:External) WHERE e.id IN $ids DELETE e", {"ids": [r[0] for r in rows]})
        return len(rows)

    def file_shas(self) -> dict[str, str]:
        if "File" not in self._tables():  # a fresh store: nothing indexed yet
            return {}
        return {row[0]: row[1] for row in self._run("MATCH (f:File) RETURN f.id, f.blob_sha")}

    def files(self) -> dict[str, dict[str, Any]]:
        rows = self._run("MATCH (f:File) RETURN f.id, f.blob_sha, f.committed_at, f.kind, f.language")
        return {r[0]: {"blob_sha": r[1], "committed_at": r[2] or 0, "kind": r[3], "language": r[4]} for r in rows}

    def write_docs(self, path: str, sections: list[DocSection], embeddings: np.ndarray) -> None:
        dim = self._dimension or int(embeddings.shape[1])
        rows = doc_rows(sections, embeddings)
        self._run(
            "MATCH (d:Doc) WHERE d.path = $path AND NOT d.id IN $keep DETACH DELETE d",
            {"path": path, "keep": [r["id"] for r in rows]},
        )
        if rows:
            self._run(
                "UNWIND $rows AS r MERGE (d:Doc {id: r.id}) SET d.path = r.path, d.title = r.title,"
                " d.heading = r.heading, d.start_line = r.start_line, d.end_line = r.end_line, d.text = r.text,"
                f" d.search_text = r.search_text, d.embedding = CAST(r.embedding AS FLOAT[{dim}])",
                {"rows": rows},
            )

    def write_mentions(self, paths: list[str], pairs: list[tuple[str, str]]) -> None:
        if paths:
            self._run("MATCH (d:Doc)-[m:MENTIONS]->() WHERE d.path IN $paths DELETE m", {"paths": paths})
        for start in range(0, len(pairs), 2000):
            self._run(
                "UNWIND $rows AS r MATCH (d:Doc {id: r.doc}), (s:Symbol {id: r.symbol}) CREATE (d)-[:MENTIONS]->(s)",
                {"rows": [{"doc": d, "symbol": t} for d, t in pairs[start : start + 2000]]},
            )

    def write_commits(self, commits: list[CommitRecord], embeddings: np.ndarray) -> None:
        dim = self._dimension or int(embeddings.shape[1])
        rows = commit_rows(commits, embeddings)
        if rows:
            self._run(
                "UNWIND $rows AS r MERGE (c:Commit {id: r.id}) SET c.short = r.short, c.author = r.author,"
                " c.committed_at = r.committed_at, c.subject = r.subject, c.message = r.message, c.files = r.files,"
                f" c.search_text = r.search_text, c.embedding = CAST(r.embedding AS FLOAT[{dim}])",
                {"rows": rows},
            )

    def delete_commits(self, ids: list[str]) -> None:
        if ids:
            self._run("MATCH (c:Commit) WHERE c.id IN $ids DETACH DELETE c", {"ids": ids})

    def commit_ids(self) -> set[str]:
        if "Commit" not in self._tables():
            return set()
        return {r[0] for r in self._run("MATCH (c:Commit) RETURN c.id")}

    def write_touches(self, pairs: list[tuple[str, str, str]]) -> None:
        """(commit id, "File" or "Symbol", target id); idempotent, targets that do not exist are skipped."""
        for label in ("File", "Symbol"):
            rows = [{"c": c, "t": t} for c, lab, t in pairs if lab == label]
            for start in range(0, len(rows), 2000):
                self._run(
                    f"UNWIND $rows AS r MATCH (c:Commit {{id: r.c}}), (t:{label} {{id: r.t}})"
                    " MERGE (c)-[:TOUCHES]->(t)",
                    {"rows": rows[start : start + 2000]},
                )

    def commits_touching(self, ids: list[str], limit: int = 5) -> dict[str, list[dict[str, Any]]]:
        if not ids:
            return {}
        rows = self._run(
            "MATCH (c:Commit)-[:TOUCHES]->(s:Symbol) WHERE s.id IN $ids"
            " RETURN s.id, c.id, c.short, c.author, c.committed_at, c.subject ORDER BY c.committed_at DESC, c.id",
            {"ids": ids},
        )
        return touching_by_symbol(rows, limit)

    def docs_mentioning(self, ids: list[str]) -> dict[str, list[str]]:
        if not ids:
            return {}
        rows = self._run(
            "MATCH (d:Doc)-[:MENTIONS]->(s:Symbol) WHERE s.id IN $ids RETURN s.id, d.id ORDER BY d.id", {"ids": ids}
        )
        return grouped(rows)

    def nodes(self, label: str, ids: list[str]) -> dict[str, dict[str, Any]]:
        if not ids or label not in ("Doc", "Commit"):
            return {}
        result = self._conn.execute(f"MATCH (n:{label}) WHERE n.id IN $ids RETURN n", {"ids": ids})
        out: dict[str, dict[str, Any]] = {}
        while result.has_next():
            node = result.get_next()[0]
            out[node["id"]] = {k: v for k, v in node.items() if not k.startswith("_") and k != "embedding"}
        return out

    # -- reads -----------------------------------------------------------------------------------
    def fulltext(self, analyzed_query: str, limit: int, label: str = "Symbol") -> list[tuple[str, float]]:
        if not analyzed_query.strip():
            return []
        rows = self._run(
            f"CALL QUERY_FTS_INDEX('{_label(label)}', '{_FTS_INDEX[label]}', $q) RETURN node.id, score"
            " ORDER BY score DESC LIMIT $k",
            {"q": analyzed_query, "k": limit},
        )
        return [(r[0], float(r[1])) for r in rows]

    def vector(
        self, embedding: np.ndarray, limit: int, label: str = "Symbol", prop: str = "embedding"
    ) -> list[tuple[str, float]]:
        _vector_prop(label, prop)
        dim = int(embedding.shape[0])
        rows = self._run(
            f"MATCH (n:{label}) WHERE n.{prop} IS NOT NULL"
            f" WITH n, array_cosine_similarity(n.{prop}, CAST($q AS FLOAT[{dim}])) AS score"
            " RETURN n.id, score ORDER BY score DESC LIMIT $k",
            {"q": embedding.astype(float).tolist(), "k": limit},
        )
        return [(r[0], float(r[1])) for r in rows]

    def chunk_owners(self, ids: list[str]) -> dict[str, str]:
        if not ids:
            return {}
        return {
            r[0]: r[1] for r in self._run("MATCH (c:Chunk) WHERE c.id IN $ids RETURN c.id, c.owner_id", {"ids": ids})
        }

    def symbols(self, ids: list[str], with_text: bool = True) -> dict[str, dict[str, Any]]:
        if not ids:
            return {}
        extra = ", n.text AS text, n.header AS header" if with_text else ""
        rows = self._dicts(f"MATCH (n:Symbol) WHERE n.id IN $ids RETURN {_SUMMARY}{extra}", {"ids": ids})
        return {row["id"]: row for row in rows}

    def lexical_docs(self, ids: list[str], label: str = "Symbol") -> dict[str, str]:
        if not ids:
            return {}
        rows = self._run(f"MATCH (n:{_label(label)}) WHERE n.id IN $ids RETURN n.id, n.search_text", {"ids": ids})
        return {r[0]: r[1] or "" for r in rows}

    def embeddings(self, ids: list[str], label: str = "Symbol", prop: str = "embedding") -> dict[str, np.ndarray]:
        _vector_prop(label, prop)
        if not ids:
            return {}
        rows = self._run(f"MATCH (n:{label}) WHERE n.id IN $ids RETURN n.id, n.{prop}", {"ids": ids})
        return {r[0]: np.asarray(r[1], dtype=np.float32) for r in rows if r[1] is not None}

    def _dicts(self, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        result = self._conn.execute(query, params)
        columns = result.get_column_names()
        rows = []
        while result.has_next():
            rows.append(dict(zip(columns, result.get_next(), strict=True)))
        return rows

    def find_symbols(self, ref: str, limit: int = 10) -> list[dict[str, Any]]:
        return self._dicts(
            f"MATCH (n:Symbol) WHERE n.id = $ref OR n.qualname = $ref OR n.name = $ref"
            f" OR n.qualname ENDS WITH $suffix RETURN {_SUMMARY} ORDER BY n.qualname LIMIT $k",
            {"ref": ref, "suffix": "." + ref, "k": limit},
        )

    def caller_counts(self, ids: list[str]) -> dict[str, int]:
        if not ids:
            return {}
        rows = self._run(
            "MATCH (a:Symbol)-[:CALLS]->(n:Symbol) WHERE n.id IN $ids RETURN n.id, count(DISTINCT a.id)", {"ids": ids}
        )
        return {r[0]: int(r[1]) for r in rows}

    def inherits(self, ids: list[str], direction: str) -> list[tuple[str, str]]:
        if not ids:
            return []
        end = "a" if direction == "out" else "b"
        rows = self._run(
            f"MATCH (a:Symbol)-[:INHERITS]->(b:Symbol) WHERE {end}.id IN $ids RETURN DISTINCT a.id, b.id", {"ids": ids}
        )
        return [(r[0], r[1]) for r in rows]

    def members(self, ids: list[str]) -> list[dict[str, Any]]:
        if not ids:
            return []
        return self._dicts(
            f"MATCH (c:Symbol)-[:DEFINES]->(n:Symbol) WHERE c.id IN $ids RETURN {_SUMMARY}",
            {"ids": ids},
        )

    def importers(self, ids: list[str]) -> list[tuple[str, str, int]]:
        if not ids:
            return []
        rows = self._run(
            "MATCH (f:File)-[r:IMPORTS]->(t:Symbol) WHERE t.id IN $ids RETURN f.id, t.id, r.line", {"ids": ids}
        )
        rows += self._run(
            "MATCH (f:File)-[r:IMPORTS]->(t:File) WHERE t.id IN $ids RETURN f.id, t.id, r.line", {"ids": ids}
        )
        return [(r[0], r[1], int(r[2] or 0)) for r in rows]

    def symbols_at(self, path: str, line: int) -> list[dict[str, Any]]:
        return self._dicts(
            f"MATCH (n:Symbol) WHERE n.path = $path AND n.start_line <= $line AND n.end_line >= $line"
            f" RETURN {_SUMMARY} ORDER BY n.end_line - n.start_line, n.start_line DESC",
            {"path": path, "line": line},
        )

    def calls(self, ids: list[str], direction: str) -> list[CallRow]:
        if not ids:
            return []
        if direction == "out":
            query = (
                "MATCH (a:Symbol)-[c:CALLS]->(n) WHERE a.id IN $ids RETURN a.id, n.id, c.line, c.resolved_by,"
                " label(n), n.name, n.qualname, n.kind, n.path, n.start_line, n.end_line, n.signature, n.file_kind"
            )
        else:
            query = (
                "MATCH (n:Symbol)-[c:CALLS]->(a:Symbol) WHERE a.id IN $ids RETURN n.id, a.id, c.line,"
                " c.resolved_by, label(n), n.name, n.qualname, n.kind, n.path, n.start_line, n.end_line,"
                " n.signature, n.file_kind"
            )
        try:
            rows = self._run(query, {"ids": ids})
        except RuntimeError:  # Kùzu refuses properties the External table lacks; ask in two steps
            rows = self._calls_split(ids, direction)
        out = []
        for src, dst, line, resolved_by, label, name, qualname, kind, path, start, end, signature, file_kind in rows:
            other_id = dst if direction == "out" else src
            other = {
                "id": other_id,
                "name": name,
                "qualname": qualname or other_id,
                "kind": kind or "external",
                "path": path,
                "start_line": start,
                "end_line": end,
                "signature": signature,
                "file_kind": file_kind,
            }
            out.append(CallRow(src, dst, int(line or 0), resolved_by or "", other, label))
        return out

    def _calls_split(self, ids: list[str], direction: str) -> list[list[Any]]:
        rows = self._run(
            "MATCH (a:Symbol)-[c:CALLS]->(n:Symbol) WHERE a.id IN $ids RETURN a.id, n.id, c.line, c.resolved_by,"
            " 'Symbol', n.name, n.qualname, n.kind, n.path, n.start_line, n.end_line, n.signature, n.file_kind",
            {"ids": ids},
        )
        rows += self._run(
            "MATCH (a:Symbol)-[c:CALLS]->(n:External) WHERE a.id IN $ids RETURN a.id, n.id, c.line,"
            " c.resolved_by, 'External', n.name, NULL, NULL, NULL, NULL, NULL, NULL, NULL",
            {"ids": ids},
        )
        return rows

    def cypher(
        self, query: str, params: dict[str, Any] | None = None, write: bool = False
    ) -> tuple[list[str], list[list[Any]]]:
        if not write and not self.read_only:
            raise StoreError("internal: read-only Cypher needs a store opened read_only")
        try:
            result = self._conn.execute(query, params or {})
        except RuntimeError as exc:
            raise StoreError(str(exc).splitlines()[0]) from exc
        columns = result.get_column_names()
        rows = []
        while result.has_next():
            rows.append(result.get_next())
        return columns, rows

    def stats(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for label in ("File", "Symbol", "Chunk", "External", "Doc", "Commit"):
            counts[label] = int(self._run(f"MATCH (n:{label}) RETURN count(n)")[0][0])
        for rel in ("DEFINES", "IMPORTS", "CALLS", "INHERITS", "MENTIONS", "TOUCHES"):
            counts[rel] = int(self._run(f"MATCH ()-[r:{rel}]->() RETURN count(r)")[0][0])
        return counts

    def close(self) -> None:
        self._conn.close()
        self._db.close()
