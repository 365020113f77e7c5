"""The Neo4j backend over Bolt: the shared, team-sized and large-scale store.

Same schema, the same shared statements (cg/graph/cypher.py) and the same GraphStore contract as the
embedded store; this module holds the primitives, the schema and the index calls. Writes are batched
``UNWIND $rows`` statements, all of an index run in one explicit transaction (``run``: readers see the
previous graph until it commits), and every value travels as a parameter. Vector search uses the native vector index
(``db.index.vector.queryNodes``; cosine, Neo4j reports it as ``(1 + cos) / 2``, which we map back to
the cosine so both backends return the same scale), full-text uses a Lucene index with the
whitespace analyzer over the tokens our own analyzer wrote (cg/lexical.py), so index-time and
query-time analysis are the same code on both backends.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

from cg.config import Settings
from cg.graph import cypher as q
from cg.graph.cypher import NODE_LABELS, SEARCHABLE, searchable, vector_prop
from cg.graph.cypher_store import CypherStore, Statement
from cg.graph.readonly import QueryRefused, plan_query, vet
from cg.graph.store import SCHEMA_VERSION, StoreError

# Every node cg writes; a full run deletes them inside its transaction, ``reset`` in batches of its own.
_GRAPH_NODES = "MATCH (n) WHERE n:File OR n:Symbol OR n:Chunk OR n:External OR n:Meta OR n:Doc OR n:Commit"
_DELETE_GRAPH = f"{_GRAPH_NODES} DETACH DELETE n"
VECTOR_INDEXES = {
    ("Symbol", "embedding"): "symbol_embedding",
    ("Symbol", "doc_embedding"): "symbol_doc_embedding",
    ("Chunk", "embedding"): "chunk_embedding",
    ("Doc", "embedding"): "doc_embedding",
    ("Commit", "embedding"): "commit_embedding",
}  # one per cypher.VECTOR_PROPS
_KINDS = {"rw": "a read and a write", "w": "a write", "s": "a schema change", "dbms": "a server command"}
FULLTEXT_INDEXES = {label: f"{label.lower()}_search_text" for label in SEARCHABLE}

# A lost server must fail fast and in one line: the driver's defaults retry a transaction for 30 s,
# logging a warning per attempt, and wait up to 60 s to acquire a connection. cg runs one command
# against one server; a few seconds of retry still ride out a leader switch or a restart.
CONNECT_SECONDS = 5.0
ACQUIRE_SECONDS = 10.0
RETRY_SECONDS = 5.0

F = TypeVar("F", bound=Callable[..., Any])


def _server_lost(method: F) -> F:
    """The server went away (stopped, killed, network gone) during ``method``: one StoreError line."""

    @functools.wraps(method)
    def run(self: Neo4jStore, *args: Any, **kwargs: Any) -> Any:
        from neo4j.exceptions import ServiceUnavailable, SessionExpired

        try:
            return method(self, *args, **kwargs)
        except (ServiceUnavailable, SessionExpired) as exc:
            raise _lost(self.uri, exc) from exc

    return run  # type: ignore[return-value]


def _lost(uri: str, exc: Exception) -> StoreError:
    return StoreError(f"lost the connection to Neo4j at {uri} ({_first_line(exc)}); is the server running?")


class Neo4jStore(CypherStore):
    backend = "neo4j"
    batch_rows = 5000

    def __init__(self, settings: Settings, read_only: bool = False) -> None:
        import neo4j
        from neo4j.exceptions import AuthError, ServiceUnavailable

        super().__init__()
        self._neo4j = neo4j
        self._tx: neo4j.Transaction | None = None  # the run's transaction, while one is open
        logging.getLogger("neo4j.notifications").setLevel(logging.ERROR)  # "label does not exist" etc.
        # the driver logs each retry as a warning and each dropped connection as an error; the failure
        # itself reaches the user as one StoreError line (or a Neo4jError), so its logs stay quiet
        logging.getLogger("neo4j").setLevel(logging.CRITICAL)
        self.read_only = read_only
        self.database = settings.neo4j_database
        self.uri = settings.neo4j_uri
        auth = (settings.neo4j_username, settings.neo4j_password) if settings.neo4j_password else None
        try:
            self._driver = neo4j.GraphDatabase.driver(
                self.uri,
                auth=auth,
                connection_timeout=CONNECT_SECONDS,
                connection_acquisition_timeout=ACQUIRE_SECONDS,
                max_transaction_retry_time=RETRY_SECONDS,
            )
            self._driver.verify_connectivity()
        except ServiceUnavailable as exc:
            raise StoreError(f"cannot reach Neo4j at {self.uri} ({_first_line(exc)}); is the server running?") from exc
        except AuthError as exc:
            raise StoreError(f"Neo4j at {self.uri} refused the credentials (NEO4J_USERNAME/NEO4J_PASSWORD)") from exc
        except (ValueError, neo4j.exceptions.ConfigurationError) as exc:
            raise StoreError(f"bad NEO4J_URI {self.uri!r}: {_first_line(exc)}") from exc
        if read_only:  # a run that never committed left nothing, so no Meta: say so, answer nothing
            schema = self.get_meta("schema")
            if schema != SCHEMA_VERSION:
                self.close()
                raise StoreError(
                    f"no complete index yet in Neo4j at {self.uri}; run `cg index`"
                    if schema is None
                    else f"the index in Neo4j at {self.uri} was built by an older cg; run `cg index` to rebuild it"
                )

    # -- primitives ------------------------------------------------------------------------------
    @_server_lost
    def _read(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        if self._tx is not None:  # inside a run: read its own writes
            return [list(r.values()) for r in self._tx.run(query, params or {})]
        records, _, _ = self._driver.execute_query(
            query, params or {}, database_=self.database, routing_=self._neo4j.RoutingControl.READ
        )
        return [list(r.values()) for r in records]

    @_server_lost
    def _write(self, query: str, params: dict[str, Any] | None = None) -> None:
        if self._tx is not None:
            self._tx.run(query, params or {}).consume()
            return
        self._driver.execute_query(query, params or {}, database_=self.database)

    @_server_lost
    def _write_all(self, statements: list[Statement]) -> None:
        if self._tx is not None:  # already all or nothing: the run's transaction
            for query, params in statements:
                self._tx.run(query, params).consume()
            return

        def work(tx) -> None:  # a managed transaction: the driver retries it on transient failures
            for query, params in statements:
                tx.run(query, params).consume()

        with self._driver.session(database=self.database) as session:
            session.execute_write(work)

    @contextmanager
    def run(self, full: bool, dimension: int | None = None) -> Iterator[None]:
        """The whole run in ONE explicit transaction: readers see the previous graph until it commits,
        and a client that dies mid-run (killed, cut off) leaves nothing, the server rolls it back.
        Indexes and constraints are created before it (Neo4j allows no schema change inside a
        transaction that writes data); a full run deletes the old graph inside it. Its size is the
        whole write: docs/neo4j.md says how big that gets and which setting bounds it."""
        if self._tx is not None:
            raise StoreError("internal: index runs do not nest")
        if dimension is not None:
            self._create_indexes(dimension, replace_vectors=full)
        from neo4j.exceptions import ServiceUnavailable, SessionExpired

        try:
            with self._driver.session(database=self.database) as session:
                tx = session.begin_transaction()
                self._tx = tx
                try:
                    if full:
                        tx.run(_DELETE_GRAPH).consume()
                    if dimension is not None:
                        self._write(q.SET_META, {"key": "dimension", "value": str(dimension)})
                        self._write(q.SET_META, {"key": "schema", "value": SCHEMA_VERSION})
                    yield
                    tx.commit()
                except BaseException:
                    if not tx.closed():
                        try:
                            tx.rollback()
                        except (ServiceUnavailable, SessionExpired):
                            pass  # the server is gone: it rolls the transaction back itself
                    raise
                finally:
                    self._tx = None
        except (ServiceUnavailable, SessionExpired) as exc:
            raise _lost(self.uri, exc) from exc

    def _cast(self, dimension: int) -> str:
        return "{}"  # vectors are plain list properties

    def ensure_schema(self, dimension: int) -> None:
        self._create_indexes(dimension, replace_vectors=False)
        self.set_meta("dimension", str(dimension))
        self.set_meta("schema", SCHEMA_VERSION)

    def _create_indexes(self, dimension: int, replace_vectors: bool) -> None:
        """Constraints, property, vector and full-text indexes, each only when missing. Vector indexes
        of another width are an error, or dropped first when ``replace_vectors`` (a full run)."""
        current = self.get_meta("dimension")
        if current is not None and int(current) != dimension:
            if not replace_vectors:
                raise StoreError(
                    f"the graph holds {current}-d embeddings but the model gives {dimension}-d; "
                    "rebuild with `cg index --rebuild`"
                )
            for index in VECTOR_INDEXES.values():
                self._write(f"DROP INDEX {index} IF EXISTS")
        self._dimension = int(dimension)
        for label in (*NODE_LABELS, "Meta"):
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

    @_server_lost
    def reset(self) -> None:
        with self._driver.session(database=self.database) as session:  # CALL IN TRANSACTIONS: auto-commit
            session.run(f"{_GRAPH_NODES} CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF 5000 ROWS").consume()
        for index in (*VECTOR_INDEXES.values(), *FULLTEXT_INDEXES.values()):
            self._write(f"DROP INDEX {index} IF EXISTS")

    # -- reads -----------------------------------------------------------------------------------
    def fulltext(self, analyzed_query: str, limit: int, label: str = "Symbol") -> list[tuple[str, float]]:
        if not analyzed_query.strip():
            return []
        index = FULLTEXT_INDEXES[searchable(label)]
        rows = self._read(
            f"CALL db.index.fulltext.queryNodes('{index}', $q, {{limit: $k}}) YIELD node, score"
            " RETURN node.id, score ORDER BY score DESC, node.id LIMIT $k",
            {"q": analyzed_query, "k": limit},
        )
        return [(r[0], float(r[1])) for r in rows]

    def vector(
        self, embedding: np.ndarray, limit: int, label: str = "Symbol", prop: str = "embedding"
    ) -> list[tuple[str, float]]:
        rows = self._read(
            f"CALL db.index.vector.queryNodes('{VECTOR_INDEXES[vector_prop(label, prop)]}', $k, $q) YIELD node, score"
            " RETURN node.id, score ORDER BY score DESC, node.id",
            {"k": limit, "q": [float(x) for x in embedding]},
        )
        return [(r[0], 2.0 * float(r[1]) - 1.0) for r in rows]  # (1 + cos) / 2 -> cos

    @_server_lost
    def cypher(
        self, query: str, params: dict[str, Any] | None = None, write: bool = False
    ) -> tuple[list[str], list[list[Any]]]:
        from neo4j.exceptions import Neo4jError

        query = vet(query, params or {}, write)  # the allow-list, before the server sees any of it
        mode = self._neo4j.WRITE_ACCESS if write else self._neo4j.READ_ACCESS
        if write and self._tx is not None:  # `cg cypher --write` is a run of its own (cg/api.py)
            try:
                result = self._tx.run(query, params or {})
                return list(result.keys()), [[_plain(v) for v in record.values()] for record in result]
            except Neo4jError as exc:
                raise StoreError(_first_line(exc.message or str(exc))) from exc
        try:
            with self._driver.session(database=self.database, default_access_mode=mode) as session:
                if not write:  # the second gate: Neo4j's own planner must call it a read ("r")
                    kind = str(session.run(plan_query(query), params or {}).consume().query_type)
                    if kind != "r":
                        raise QueryRefused(
                            f"read-only Cypher refuses this query: Neo4j plans it as {_KINDS.get(kind, kind)}"
                        )
                result = session.run(query, params or {})
                columns = list(result.keys())
                rows = [[_plain(v) for v in record.values()] for record in result]
        except Neo4jError as exc:
            raise StoreError(_first_line(exc.message or str(exc))) from exc
        return columns, rows

    def close(self) -> None:
        from neo4j.exceptions import DriverError

        try:
            self._driver.close()
        except (DriverError, OSError):  # the server is already gone: nothing left to release
            pass


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
