"""The Neo4j backend over Bolt: the shared, team-sized and large-scale store.

Same schema, the same shared statements (cg/graph/cypher.py) and the same GraphStore contract as the
embedded store; this module holds the primitives, the schema and the index calls. Writes are batched
``UNWIND $rows`` statements, one managed transaction per file (the driver retries transient failures),
and every value travels as a parameter. Vector search uses the native vector index
(``db.index.vector.queryNodes``; cosine, Neo4j reports it as ``(1 + cos) / 2``, which we map back to
the cosine so both backends return the same scale), full-text uses a Lucene index with the
whitespace analyzer over the tokens our own analyzer wrote (cg/lexical.py), so index-time and
query-time analysis are the same code on both backends.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from cg.config import Settings
from cg.graph.cypher import NODE_LABELS, SEARCHABLE, searchable, vector_prop
from cg.graph.cypher_store import CypherStore, Statement
from cg.graph.store import SCHEMA_VERSION, StoreError

VECTOR_INDEXES = {
    ("Symbol", "embedding"): "symbol_embedding",
    ("Symbol", "doc_embedding"): "symbol_doc_embedding",
    ("Chunk", "embedding"): "chunk_embedding",
    ("Doc", "embedding"): "doc_embedding",
    ("Commit", "embedding"): "commit_embedding",
}  # one per cypher.VECTOR_PROPS
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
            raise StoreError(
                f"lost the connection to Neo4j at {self.uri} ({_first_line(exc)}); is the server running?"
            ) from exc

    return run  # type: ignore[return-value]


class Neo4jStore(CypherStore):
    backend = "neo4j"
    batch_rows = 5000

    def __init__(self, settings: Settings, read_only: bool = False) -> None:
        import neo4j
        from neo4j.exceptions import AuthError, ServiceUnavailable

        super().__init__()
        self._neo4j = neo4j
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

    # -- primitives ------------------------------------------------------------------------------
    @_server_lost
    def _read(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        records, _, _ = self._driver.execute_query(
            query, params or {}, database_=self.database, routing_=self._neo4j.RoutingControl.READ
        )
        return [list(r.values()) for r in records]

    @_server_lost
    def _write(self, query: str, params: dict[str, Any] | None = None) -> None:
        self._driver.execute_query(query, params or {}, database_=self.database)

    @_server_lost
    def _write_all(self, statements: list[Statement]) -> None:
        def work(tx) -> None:  # a managed transaction: the driver retries it on transient failures
            for query, params in statements:
                tx.run(query, params).consume()

        with self._driver.session(database=self.database) as session:
            session.execute_write(work)

    def _cast(self, dimension: int) -> str:
        return "{}"  # vectors are plain list properties

    def ensure_schema(self, dimension: int) -> None:
        current = self.get_meta("dimension")
        if current is not None and int(current) != dimension:
            raise StoreError(
                f"the graph holds {current}-d embeddings but the model gives {dimension}-d; "
                "rebuild with `cg index --rebuild`"
            )
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
        self.set_meta("dimension", str(dimension))
        self.set_meta("schema", SCHEMA_VERSION)

    @_server_lost
    def reset(self) -> None:
        with self._driver.session(database=self.database) as session:  # CALL IN TRANSACTIONS: auto-commit
            session.run(
                "MATCH (n) WHERE n:File OR n:Symbol OR n:Chunk OR n:External OR n:Meta OR n:Doc OR n:Commit"
                " CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS"
            ).consume()
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

        mode = self._neo4j.WRITE_ACCESS if write else self._neo4j.READ_ACCESS
        try:
            with self._driver.session(database=self.database, default_access_mode=mode) as session:
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
