"""The Neo4j backend over Bolt: the shared, team-sized and large-scale store.

Same schema and same GraphStore contract as the embedded store. Writes are batched ``UNWIND $rows``
statements, one managed transaction per file (the driver retries transient failures), and every
value travels as a parameter. Cypher text is built only from the closed set of labels and
relationship types below, never from data. Vector search uses the native vector index
(``db.index.vector.queryNodes``; cosine, Neo4j reports it as ``(1 + cos) / 2``, which we map back to
the cosine so both backends return the same scale), full-text uses a Lucene index with the
whitespace analyzer over the tokens our own analyzer wrote (cg/lexical.py), so index-time and
query-time analysis are the same code on both backends.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import numpy as np

from cg.config import Settings
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

VECTOR_INDEXES = {
    ("Symbol", "embedding"): "symbol_embedding",
    ("Symbol", "doc_embedding"): "symbol_doc_embedding",
    ("Chunk", "embedding"): "chunk_embedding",
    ("Doc", "embedding"): "doc_embedding",
    ("Commit", "embedding"): "commit_embedding",
}
FULLTEXT_INDEXES = {
    "Symbol": "symbol_search_text",
    "Chunk": "chunk_search_text",
    "Doc": "doc_search_text",
    "Commit": "commit_search_text",
}
LABELS = ("File", "Symbol", "Chunk", "External", "Meta", "Doc", "Commit")
REL_PROPS = {
    "DEFINES": "{line: r.line}",
    "IMPORTS": "{line: r.line, resolved_by: r.resolved_by}",
    "CALLS": "{line: r.line, resolved_by: r.resolved_by, confidence: r.confidence, candidates: r.candidates}",
    "INHERITS": "{line: r.line, resolved_by: r.resolved_by}",
}
_NODE_LABELS = ("File", "Symbol", "External")  # edge ends (Chunk only has PART_OF, written with the file)
_SUMMARY = ", ".join(f"n.{f} AS {f}" for f in SUMMARY_FIELDS)

_UPSERT_FILE = (
    "MERGE (f:File {id: $id}) SET f.path = $id, f.language = $language, f.kind = $kind,"
    " f.blob_sha = $blob_sha, f.loc = $loc, f.module = $module, f.committed_at = $committed_at"
)
_DELETE_STALE = "MATCH (s:Symbol {path: $path}) WHERE NOT s.id IN $keep DETACH DELETE s"
_DELETE_FILE_EDGES = "MATCH (f:File {id: $path})-[r]->() DELETE r"
_DELETE_SYMBOL_EDGES = "MATCH (s:Symbol {path: $path})-[r]->() DELETE r"
_UPSERT_SYMBOLS = (
    "UNWIND $rows AS r MERGE (s:Symbol {id: r.id}) SET s.name = r.name, s.qualname = r.qualname, s.kind = r.kind,"
    " s.path = r.path, s.start_line = r.start_line, s.end_line = r.end_line, s.signature = r.signature,"
    " s.docstring = r.docstring, s.text = r.text, s.header = r.header, s.search_text = r.search_text,"
    " s.parent_id = r.parent_id, s.language = r.language, s.file_kind = r.file_kind, s.blob_sha = r.blob_sha,"
    " s.committed_at = r.committed_at, s.embedding = r.embedding, s.doc_embedding = r.doc_embedding"
)
_DELETE_CHUNKS = "MATCH (c:Chunk {path: $path}) DETACH DELETE c"
_CREATE_CHUNKS = (
    "UNWIND $rows AS r MATCH (s:Symbol {id: r.owner_id})"
    " CREATE (c:Chunk {id: r.id, owner_id: r.owner_id, kind: r.kind, path: r.path, start_line: r.start_line,"
    " end_line: r.end_line, text: r.text, search_text: r.search_text, embedding: r.embedding})-[:PART_OF]->(s)"
)
_UPSERT_EXTERNALS = "UNWIND $rows AS r MERGE (e:External {id: r.id}) SET e.name = r.name, e.resolved = r.resolved"


def _searchable(label: str) -> str:
    if label not in FULLTEXT_INDEXES:
        raise ValueError(f"not a searchable label: {label!r}")
    return label


def _edge_query(rel: str, src: str, dst: str) -> str:
    if rel not in REL_PROPS or src not in _NODE_LABELS or dst not in _NODE_LABELS:
        raise ValueError(f"not a schema edge: {src}-[{rel}]->{dst}")
    return (
        f"UNWIND $rows AS r MATCH (a:{src} {{id: r.src}}) MATCH (b:{dst} {{id: r.dst}})"
        f" CREATE (a)-[:{rel} {REL_PROPS[rel]}]->(b)"
    )


class Neo4jStore:
    backend = "neo4j"

    def __init__(self, settings: Settings, read_only: bool = False) -> None:
        import neo4j
        from neo4j.exceptions import AuthError, ServiceUnavailable

        self._neo4j = neo4j
        logging.getLogger("neo4j.notifications").setLevel(logging.ERROR)  # "label does not exist" etc.
        self.read_only = read_only
        self.database = settings.neo4j_database
        self.uri = settings.neo4j_uri
        auth = (settings.neo4j_username, settings.neo4j_password) if settings.neo4j_password else None
        try:
            self._driver = neo4j.GraphDatabase.driver(self.uri, auth=auth)
            self._driver.verify_connectivity()
        except ServiceUnavailable as exc:
            raise StoreError(f"cannot reach Neo4j at {self.uri} ({_first_line(exc)}); is the server running?") from exc
        except AuthError as exc:
            raise StoreError(f"Neo4j at {self.uri} refused the credentials (NEO4J_USERNAME/NEO4J_PASSWORD)") from exc
        except (ValueError, neo4j.exceptions.ConfigurationError) as exc:
            raise StoreError(f"bad NEO4J_URI {self.uri!r}: {_first_line(exc)}") from exc
        self._dimension: int | None = None

    # -- plumbing --------------------------------------------------------------------------------
    def _read(self, query: str, **params: Any) -> list[list[Any]]:
        records, _, _ = self._driver.execute_query(
            query, params, database_=self.database, routing_=self._neo4j.RoutingControl.READ
        )
        return [list(r.values()) for r in records]

    def _write(self, query: str, **params: Any) -> None:
        self._driver.execute_query(query, params, database_=self.database)

    def ensure_schema(self, dimension: int) -> None:
        current = self.get_meta("dimension")
        if current is not None and int(current) != dimension:
            raise StoreError(
                f"the graph holds {current}-d embeddings but the model gives {dimension}-d; "
                "rebuild with `cg index --rebuild`"
            )
        self._dimension = int(dimension)
        for label in LABELS:
            key = "key" if label == "Meta" else "id"
            self._write(
                f"CREATE CONSTRAINT {label.lower()}_{key}_unique IF NOT EXISTS"
                f" FOR (n:{label}) REQUIRE n.{key} IS UNIQUE"
            )
        self._write("CREATE INDEX symbol_path IF NOT EXISTS FOR (n:Symbol) ON (n.path)")
        self._write("CREATE INDEX symbol_name IF NOT EXISTS FOR (n:Symbol) ON (n.name)")
        self._write("CREATE INDEX symbol_qualname IF NOT EXISTS FOR (n:Symbol) ON (n.qualname)")
        self._write("CREATE INDEX chunk_path IF NOT EXISTS FOR (n:Chunk) ON (n.path)")
        self._write("CREATE INDEX doc_path IF NOT EXISTS FOR (n:Doc) ON (n.path)")
        for (label, prop), index in VECTOR_INDEXES.items():
            self._write(
                f"CREATE VECTOR INDEX {index} IF NOT EXISTS FOR (n:{label}) ON n.{prop}"
                f" OPTIONS {{indexConfig: {{`vector.dimensions`: {self._dimension},"
                " `vector.similarity_function`: 'cosine'}}"
            )
        for label, index in FULLTEXT_INDEXES.items():
            self._write(
                f"CREATE FULLTEXT INDEX {index} IF NOT EXISTS FOR (n:{label}) ON EACH [n.search_text]"
                " OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace'}}"
            )
        self._write("CALL db.awaitIndexes(300)")
        self.set_meta("dimension", str(dimension))
        self.set_meta("schema", SCHEMA_VERSION)

    def reset(self) -> None:
        with self._driver.session(database=self.database) as session:  # CALL IN TRANSACTIONS: auto-commit
            session.run(
                "MATCH (n) WHERE n:File OR n:Symbol OR n:Chunk OR n:External OR n:Meta OR n:Doc OR n:Commit"
                " CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS"
            ).consume()
        for index in (*VECTOR_INDEXES.values(), *FULLTEXT_INDEXES.values()):
            self._write(f"DROP INDEX {index} IF EXISTS")

    def get_meta(self, key: str) -> str | None:
        rows = self._read("MATCH (m:Meta {key: $key}) RETURN m.value", key=key)
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        self._write("MERGE (m:Meta {key: $key}) SET m.value = $value", key=key, value=value)

    # -- writes ----------------------------------------------------------------------------------
    def write_file(self, write: FileWrite) -> None:
        rec = write.file
        symbols = write.symbol_rows()
        externals = external_rows(write.externals)
        chunks = write.chunk_rows()

        def work(tx) -> None:
            tx.run(
                _UPSERT_FILE,
                id=rec.path,
                language=rec.language,
                kind=rec.kind,
                blob_sha=rec.blob_sha,
                loc=rec.loc,
                module=rec.module,
                committed_at=rec.committed_at,
            ).consume()
            tx.run(_DELETE_STALE, path=rec.path, keep=[s["id"] for s in symbols]).consume()
            tx.run(_DELETE_FILE_EDGES, path=rec.path).consume()
            tx.run(_DELETE_SYMBOL_EDGES, path=rec.path).consume()
            if symbols:
                tx.run(_UPSERT_SYMBOLS, rows=symbols).consume()
            if externals:
                tx.run(_UPSERT_EXTERNALS, rows=externals).consume()
            tx.run(_DELETE_CHUNKS, path=rec.path).consume()
            if chunks:
                tx.run(_CREATE_CHUNKS, rows=chunks).consume()

        with self._driver.session(database=self.database) as session:
            session.execute_write(work)

    def write_edges(self, edges: list[Edge], externals: Iterable[External] = ()) -> None:
        rows_ext = external_rows(externals)
        if rows_ext:
            self._write(_UPSERT_EXTERNALS, rows=rows_ext)
        groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for e in edges:
            groups.setdefault((e.type, e.src_label, e.dst_label), []).append(edge_row(e))
        with self._driver.session(database=self.database) as session:
            for (rel, src, dst), rows in groups.items():
                query = _edge_query(rel, src, dst)
                for start in range(0, len(rows), 5000):
                    batch = rows[start : start + 5000]
                    session.execute_write(lambda tx, q=query, b=batch: tx.run(q, rows=b).consume())

    def delete_files(self, paths: list[str]) -> None:
        if paths:
            self._write("MATCH (c:Chunk) WHERE c.path IN $paths DETACH DELETE c", paths=paths)
            self._write("MATCH (s:Symbol) WHERE s.path IN $paths DETACH DELETE s", paths=paths)
            self._write("MATCH (d:Doc) WHERE d.path IN $paths DETACH DELETE d", paths=paths)
            self._write("MATCH (f:File) WHERE f.id IN $paths DETACH DELETE f", paths=paths)

    def delete_edges(self, paths: list[str]) -> None:
        if paths:
            self._write("MATCH (f:File)-[r]->() WHERE f.id IN $paths DELETE r", paths=paths)
            self._write("MATCH (s:Symbol)-[r]->() WHERE s.path IN $paths DELETE r", paths=paths)

    def prune_externals(self) -> int:
        rows = self._read("MATCH (e:External) WHERE NOT EXISTS { MATCH ()-->(e) } RETURN e.id")
        if rows:
            self._write("MATCH (e:External) WHERE e.id IN $ids DELETE e", ids=[r[0] for r in rows])
        return len(rows)

    def file_shas(self) -> dict[str, str]:
        return {row[0]: row[1] for row in self._read("MATCH (f:File) RETURN f.id, f.blob_sha")}

    def files(self) -> dict[str, dict[str, Any]]:
        rows = self._read("MATCH (f:File) RETURN f.id, f.blob_sha, f.committed_at, f.kind, f.language")
        return {r[0]: {"blob_sha": r[1], "committed_at": r[2] or 0, "kind": r[3], "language": r[4]} for r in rows}

    def write_docs(self, path: str, sections: list[DocSection], embeddings: np.ndarray) -> None:
        rows = doc_rows(sections, embeddings)

        def work(tx) -> None:
            tx.run(
                "MATCH (d:Doc {path: $path}) WHERE NOT d.id IN $keep DETACH DELETE d",
                path=path,
                keep=[r["id"] for r in rows],
            ).consume()
            if rows:
                tx.run(
                    "UNWIND $rows AS r MERGE (d:Doc {id: r.id}) SET d.path = r.path, d.title = r.title,"
                    " d.heading = r.heading, d.start_line = r.start_line, d.end_line = r.end_line, d.text = r.text,"
                    " d.search_text = r.search_text, d.embedding = r.embedding",
                    rows=rows,
                ).consume()

        with self._driver.session(database=self.database) as session:
            session.execute_write(work)

    def write_mentions(self, paths: list[str], pairs: list[tuple[str, str]]) -> None:
        if paths:
            self._write("MATCH (d:Doc)-[m:MENTIONS]->() WHERE d.path IN $paths DELETE m", paths=paths)
        for start in range(0, len(pairs), 5000):
            self._write(
                "UNWIND $rows AS r MATCH (d:Doc {id: r.doc}) MATCH (s:Symbol {id: r.symbol})"
                " CREATE (d)-[:MENTIONS]->(s)",
                rows=[{"doc": d, "symbol": t} for d, t in pairs[start : start + 5000]],
            )

    def write_commits(self, commits: list[CommitRecord], embeddings: np.ndarray) -> None:
        rows = commit_rows(commits, embeddings)
        if rows:
            self._write(
                "UNWIND $rows AS r MERGE (c:Commit {id: r.id}) SET c.short = r.short, c.author = r.author,"
                " c.committed_at = r.committed_at, c.subject = r.subject, c.message = r.message, c.files = r.files,"
                " c.search_text = r.search_text, c.embedding = r.embedding",
                rows=rows,
            )

    def delete_commits(self, ids: list[str]) -> None:
        if ids:
            self._write("MATCH (c:Commit) WHERE c.id IN $ids DETACH DELETE c", ids=ids)

    def commit_ids(self) -> set[str]:
        return {r[0] for r in self._read("MATCH (c:Commit) RETURN c.id")}

    def write_touches(self, pairs: list[tuple[str, str, str]]) -> None:
        for label in ("File", "Symbol"):
            rows = [{"c": c, "t": t} for c, lab, t in pairs if lab == label]
            for start in range(0, len(rows), 5000):
                self._write(
                    f"UNWIND $rows AS r MATCH (c:Commit {{id: r.c}}) MATCH (t:{label} {{id: r.t}})"
                    " MERGE (c)-[:TOUCHES]->(t)",
                    rows=rows[start : start + 5000],
                )

    def commits_touching(self, ids: list[str], limit: int = 5) -> dict[str, list[dict[str, Any]]]:
        if not ids:
            return {}
        rows = self._read(
            "MATCH (c:Commit)-[:TOUCHES]->(s:Symbol) WHERE s.id IN $ids"
            " RETURN s.id, c.id, c.short, c.author, c.committed_at, c.subject ORDER BY c.committed_at DESC, c.id",
            ids=ids,
        )
        return touching_by_symbol(rows, limit)

    def docs_mentioning(self, ids: list[str]) -> dict[str, list[str]]:
        if not ids:
            return {}
        rows = self._read(
            "MATCH (d:Doc)-[:MENTIONS]->(s:Symbol) WHERE s.id IN $ids RETURN s.id, d.id ORDER BY d.id", ids=ids
        )
        return grouped(rows)

    def nodes(self, label: str, ids: list[str]) -> dict[str, dict[str, Any]]:
        if not ids or label not in ("Doc", "Commit"):
            return {}
        rows = self._read(f"MATCH (n:{label}) WHERE n.id IN $ids RETURN n", ids=ids)
        return {r[0]["id"]: {k: v for k, v in dict(r[0]).items() if k != "embedding"} for r in rows}

    # -- reads -----------------------------------------------------------------------------------
    def fulltext(self, analyzed_query: str, limit: int, label: str = "Symbol") -> list[tuple[str, float]]:
        if not analyzed_query.strip():
            return []
        rows = self._read(
            f"CALL db.index.fulltext.queryNodes('{FULLTEXT_INDEXES[label]}', $q, {{limit: $k}}) YIELD node, score"
            " RETURN node.id, score ORDER BY score DESC, node.id LIMIT $k",
            q=analyzed_query,
            k=limit,
        )
        return [(r[0], float(r[1])) for r in rows]

    def vector(
        self, embedding: np.ndarray, limit: int, label: str = "Symbol", prop: str = "embedding"
    ) -> list[tuple[str, float]]:
        rows = self._read(
            f"CALL db.index.vector.queryNodes('{VECTOR_INDEXES[(label, prop)]}', $k, $q) YIELD node, score"
            " RETURN node.id, score ORDER BY score DESC, node.id",
            k=limit,
            q=[float(x) for x in embedding],
        )
        return [(r[0], 2.0 * float(r[1]) - 1.0) for r in rows]  # (1 + cos) / 2 -> cos

    def chunk_owners(self, ids: list[str]) -> dict[str, str]:
        if not ids:
            return {}
        return {r[0]: r[1] for r in self._read("MATCH (c:Chunk) WHERE c.id IN $ids RETURN c.id, c.owner_id", ids=ids)}

    def _dicts(self, query: str, **params: Any) -> list[dict[str, Any]]:
        records, _, _ = self._driver.execute_query(
            query, params, database_=self.database, routing_=self._neo4j.RoutingControl.READ
        )
        return [dict(r) for r in records]

    def symbols(self, ids: list[str], with_text: bool = True) -> dict[str, dict[str, Any]]:
        if not ids:
            return {}
        extra = ", n.text AS text, n.header AS header" if with_text else ""
        rows = self._dicts(f"MATCH (n:Symbol) WHERE n.id IN $ids RETURN {_SUMMARY}{extra}", ids=ids)
        return {row["id"]: row for row in rows}

    def lexical_docs(self, ids: list[str], label: str = "Symbol") -> dict[str, str]:
        if not ids:
            return {}
        rows = self._read(f"MATCH (n:{_searchable(label)}) WHERE n.id IN $ids RETURN n.id, n.search_text", ids=ids)
        return {r[0]: r[1] or "" for r in rows}

    def embeddings(self, ids: list[str], label: str = "Symbol", prop: str = "embedding") -> dict[str, np.ndarray]:
        if (label, prop) not in VECTOR_INDEXES:
            raise ValueError(f"no vectors at {label}.{prop}")
        if not ids:
            return {}
        rows = self._read(f"MATCH (n:{label}) WHERE n.id IN $ids RETURN n.id, n.{prop}", ids=ids)
        return {r[0]: np.asarray(r[1], dtype=np.float32) for r in rows if r[1] is not None}

    def find_symbols(self, ref: str, limit: int = 10) -> list[dict[str, Any]]:
        return self._dicts(
            f"MATCH (n:Symbol) WHERE n.id = $ref OR n.qualname = $ref OR n.name = $ref"
            f" OR n.qualname ENDS WITH $suffix RETURN {_SUMMARY} ORDER BY n.qualname LIMIT $k",
            ref=ref,
            suffix="." + ref,
            k=limit,
        )

    def caller_counts(self, ids: list[str]) -> dict[str, int]:
        if not ids:
            return {}
        rows = self._read(
            "MATCH (a:Symbol)-[:CALLS]->(n:Symbol) WHERE n.id IN $ids RETURN n.id, count(DISTINCT a.id)", ids=ids
        )
        return {r[0]: int(r[1]) for r in rows}

    def inherits(self, ids: list[str], direction: str) -> list[tuple[str, str]]:
        if not ids:
            return []
        end = "a" if direction == "out" else "b"
        rows = self._read(
            f"MATCH (a:Symbol)-[:INHERITS]->(b:Symbol) WHERE {end}.id IN $ids RETURN DISTINCT a.id, b.id", ids=ids
        )
        return [(r[0], r[1]) for r in rows]

    def members(self, ids: list[str]) -> list[dict[str, Any]]:
        if not ids:
            return []
        return self._dicts(
            f"MATCH (c:Symbol)-[:DEFINES]->(n:Symbol) WHERE c.id IN $ids RETURN {_SUMMARY}",
            ids=ids,
        )

    def importers(self, ids: list[str]) -> list[tuple[str, str, int]]:
        if not ids:
            return []
        rows = self._read(
            "MATCH (f:File)-[r:IMPORTS]->(t) WHERE (t:Symbol OR t:File) AND t.id IN $ids RETURN f.id, t.id, r.line",
            ids=ids,
        )
        return [(r[0], r[1], int(r[2] or 0)) for r in rows]

    def symbols_at(self, path: str, line: int) -> list[dict[str, Any]]:
        return self._dicts(
            f"MATCH (n:Symbol {{path: $path}}) WHERE n.start_line <= $line AND n.end_line >= $line"
            f" RETURN {_SUMMARY} ORDER BY n.end_line - n.start_line, n.start_line DESC",
            path=path,
            line=line,
        )

    def calls(self, ids: list[str], direction: str) -> list[CallRow]:
        if not ids:
            return []
        if direction == "out":
            query = "MATCH (a:Symbol)-[c:CALLS]->(n) WHERE a.id IN $ids RETURN a.id AS src, n.id AS dst,"
        else:
            query = "MATCH (n:Symbol)-[c:CALLS]->(a:Symbol) WHERE a.id IN $ids RETURN n.id AS src, a.id AS dst,"
        query += (
            " c.line AS line, c.resolved_by AS resolved_by, labels(n)[0] AS label, n.name AS name,"
            " n.qualname AS qualname, n.kind AS kind, n.path AS path, n.start_line AS start_line,"
            " n.end_line AS end_line, n.signature AS signature, n.file_kind AS file_kind"
        )
        out = []
        for row in self._dicts(query, ids=ids):
            other_id = row["dst"] if direction == "out" else row["src"]
            other = {
                "id": other_id,
                "name": row["name"],
                "qualname": row["qualname"] or other_id,
                "kind": row["kind"] or "external",
                "path": row["path"],
                "start_line": row["start_line"],
                "end_line": row["end_line"],
                "signature": row["signature"],
                "file_kind": row["file_kind"],
            }
            out.append(
                CallRow(row["src"], row["dst"], int(row["line"] or 0), row["resolved_by"] or "", other, row["label"])
            )
        return out

    def cypher(
        self, query: str, params: dict[str, Any] | None = None, write: bool = False
    ) -> tuple[list[str], list[list[Any]]]:
        from neo4j.exceptions import Neo4jError

        mode = self._neo4j.WRITE_ACCESS if write else self._neo4j.READ_ACCESS
        try:
            with self._driver.session(database=self.database, default_access_mode=mode) as session:
                result = session.run(query, params or {})
                columns = list(result.keys())
                rows = [[_plain(v) for v in record.values()] for record in result]
        except Neo4jError as exc:
            raise StoreError(_first_line(exc.message or str(exc))) from exc
        return columns, rows

    def stats(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for label in ("File", "Symbol", "Chunk", "External", "Doc", "Commit"):
            counts[label] = int(self._read(f"MATCH (n:{label}) RETURN count(n)")[0][0])
        for rel in (*REL_PROPS, "MENTIONS", "TOUCHES"):
            counts[rel] = int(self._read(f"MATCH ()-[r:{rel}]->() RETURN count(r)")[0][0])
        return counts

    def close(self) -> None:
        self._driver.close()


def _plain(value: Any) -> Any:
    """Nodes and relationships as plain dicts, so `cg cypher --json` can print them."""
    if hasattr(value, "items") and hasattr(value, "element_id"):
        data = dict(value.items())
        data.pop("embedding", None)
        data.pop("doc_embedding", None)
        return data
    return value


def _first_line(exc: object) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
