"""The Neo4j backend over Bolt: the shared, team-sized and large-scale store.

Same schema, the same shared statements (cg/graph/cypher.py) and the same GraphStore contract as the
embedded store; this module holds the primitives, the schema and the index calls. Writes are batched
``UNWIND $rows`` statements, all of an index run in one explicit transaction (``run``: readers see the
previous graph until it commits), and every value travels as a parameter. Vector search uses the native vector index
(``db.index.vector.queryNodes``; cosine, Neo4j reports it as ``(1 + cos) / 2``, which we map back to
the cosine so both backends return the same scale), full-text uses a Lucene index with the
whitespace analyzer over the tokens our own analyzer wrote (cg/lexical.py), so index-time and
query-time analysis are the same code on both backends.

One database holds many repositories (docs/neo4j.md): every node carries its repository's key, the
unique constraints are on (repo, id), and this store reads and writes only ``settings.repo_key``'s
nodes. The vector and full-text indexes are the database's, shared by every repository, and answer a
global top-k; ``_scoped_hits`` asks them for more until k of this repository's nodes are found or the
index has nothing more to give. A writer holds its repository's lease (cg/graph/lease.py).
"""

from __future__ import annotations

import copy
import functools
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

from cg.config import Settings
from cg.graph import cypher as q
from cg.graph.cypher import NODE_LABELS, TEXT_FIELDS, text_field, vector_prop
from cg.graph.cypher_store import CypherStore, Statement
from cg.graph.lease import Lease, already_exists
from cg.graph.readonly import QueryRefused, plan_query, vet
from cg.graph.store import SCHEMA_VERSION, FileWrite, ServerLost, StoreError

# This repository's nodes, label by label (each seeks the label's repo index): a full run deletes them
# inside its transaction, ``reset`` in batches of its own.
_DELETE_GRAPH = tuple(f"MATCH (n:{label} {{repo: $repo}}) DETACH DELETE n" for label in (*NODE_LABELS, "Meta"))
# The run still holds its repository's lease, checked inside its transaction just before the commit.
_STILL_HELD = "MATCH (l:IndexLock {repo: $repo}) WHERE l.token = $token RETURN count(l)"
VECTOR_INDEXES = {
    ("Symbol", "embedding"): "symbol_embedding",
    ("Symbol", "doc_embedding"): "symbol_doc_embedding",
    ("Chunk", "embedding"): "chunk_embedding",
    ("Doc", "embedding"): "doc_embedding",
    ("Commit", "embedding"): "commit_embedding",
}  # one per cypher.VECTOR_PROPS
_KINDS = {"rw": "a read and a write", "w": "a write", "s": "a schema change", "dbms": "a server command"}
FULLTEXT_INDEXES = {(label, prop): f"{label.lower()}_{prop}" for label, prop in TEXT_FIELDS}
# (label, properties) of the range indexes beside the (repo, id) constraints: the keyed lookups by path and
# by name, repository first so every seek stays inside one repository; and the repository alone, for what
# reads a whole repository (file_shas, stats, prune_externals, reset), which Neo4j 5.26 does not answer
# from the prefix of a composite index (EXPLAIN shows a label scan).
LOOKUP_INDEXES = {
    "symbol_repo_path": ("Symbol", ("repo", "path")),
    "symbol_repo_name": ("Symbol", ("repo", "name")),
    "symbol_repo_qualname": ("Symbol", ("repo", "qualname")),
    "chunk_repo_path": ("Chunk", ("repo", "path")),
    "doc_repo_path": ("Doc", ("repo", "path")),
    **{f"{label.lower()}_repo": (label, ("repo",)) for label in (*NODE_LABELS, "Meta")},
}
# What schema 6 and older created: one unique id per label (two repositories could not share an id) and
# single-property lookups. Dropped, with every node that has no repository, when a database is first
# used by this version.
LEGACY_SCHEMA = (
    *(f"DROP CONSTRAINT {label.lower()}_id_unique IF EXISTS" for label in NODE_LABELS),
    "DROP CONSTRAINT meta_key_unique IF EXISTS",
    *(
        f"DROP INDEX {name} IF EXISTS"
        for name in ("symbol_path", "symbol_name", "symbol_qualname", "chunk_path", "doc_path")
    ),
)

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
    return ServerLost(f"lost the connection to Neo4j at {uri} ({_first_line(exc)}); is the server running?")


class _Batched:
    """A full run's node rows, gathered across files and written a few statements at a time.

    Each file's write is five or six small statements (its File, Symbols, Chunks, the chunks' links
    and its Externals), each a round trip to the server and a plan execution: on requests 2.32.3, 257
    statements for 40 files. A full run starts from an empty repository inside its own transaction,
    so nothing reads a file's nodes before the run's next read or edge write: the rows wait here, one
    list per statement, and go out in ``batch_rows`` UNWIND batches when ``bulk_rows`` wait, before
    any other statement of the run, and at its end. Statements that create nodes run before the ones
    that MATCH them (a chunk's link to its owner, a symbol's docstring vector), whatever order the
    files brought them in. Rows keep their order, so a node MERGEd twice ends as the last write left it.
    """

    def __init__(self) -> None:
        self.rows: dict[str, list[dict[str, Any]]] = {}

    @property
    def pending(self) -> int:
        return sum(len(rows) for rows in self.rows.values())

    def add(self, query: str, params: dict[str, Any]) -> bool:
        """Take one statement of a file's write; False when it is not one of UNWIND rows."""
        if query == q.UPSERT_FILE:
            self.rows.setdefault(q.UPSERT_FILES, []).append(params)
            return True
        if set(params) != {"rows"}:
            return False
        self.rows.setdefault(query, []).extend(params["rows"])
        return True

    def drain(self, batch_rows: int) -> Iterator[Statement]:
        waiting, self.rows = self.rows, {}
        for query in sorted(waiting, key=lambda query: "MATCH" in query):  # node-creating MERGEs first
            rows = waiting[query]
            for start in range(0, len(rows), batch_rows):
                yield query, {"rows": rows[start : start + batch_rows]}


# The vector index is approximate (HNSW, whose search keeps as many candidates as it is asked for), so
# a query asks it for this many times the hits it wants and keeps the best: at k alone it missed a
# chunk at rank 37 of 40 on the shop that Kùzu's exact search holds, which moved a definition's vector
# rank and made the two backends explain a question differently (tests/cli/test_cli_neo4j.py). Its
# scores are exact: the index is made without quantization (``vector.quantization.enabled``, on by
# default since Neo4j 5.23), whose scores differed from the true cosine by up to 0.005.
VECTOR_WIDEN = 4


class Neo4jStore(CypherStore):
    backend = "neo4j"
    batch_rows = 5000
    # A full run's file rows gathered before they are written (``_Batched``), at most this many; 0
    # writes each file's statements as they come, as every other run does. Measured by
    # benchmarks/write_throughput.py.
    bulk_rows = 20_000
    _batched: _Batched | None = None

    def __init__(self, settings: Settings, read_only: bool = False) -> None:
        import neo4j
        from neo4j.exceptions import AuthError, ServiceUnavailable

        super().__init__(settings.repo_key)
        self._neo4j = neo4j
        self._tx: neo4j.Transaction | None = None  # the run's transaction, while one is open
        self._lease_seconds = settings.lease_seconds
        self._lease: Lease | None = None
        self._owns_driver = True  # False in a view of another repository (for_repo)
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
        if read_only:
            self._check_indexed()

    def _check_indexed(self) -> None:
        """A reader of a repository with no complete graph here (a first run that never committed left
        nothing, not even Meta; or one an older cg built) is one line, not an empty answer."""
        built = self.get_meta("schema")
        if built == SCHEMA_VERSION:
            return
        self.close()
        where = f"Neo4j database {self.database!r} at {self.uri}"
        if built is None:
            raise StoreError(
                f"no complete index yet of repository {self.repo_key!r} in {where} (--repo-key / CG_REPO_KEY"
                " names another?); run `cg index`"
            )
        raise StoreError(f"the graph of {self.repo_key!r} in {where} was built by an older cg; run `cg index`")

    # -- a full run's batched rows (_Batched) -------------------------------------------------------
    def write_file(self, write: FileWrite) -> None:
        batched = self._batched
        if batched is None or not write.new:
            super().write_file(write)
            return
        for query, params in self._file_statements(write, replaces=False):
            if not batched.add(query, params):
                self._flush_batched()
                self._write(query, params)
        if batched.pending >= self.bulk_rows:
            self._flush_batched()

    @_server_lost
    def _flush_batched(self) -> None:
        """Write the rows waiting in the run's batches (before any other statement of the run)."""
        batched = self._batched
        if batched is None or not batched.pending or self._tx is None:
            return
        self._check_lease()
        for query, params in batched.drain(self.batch_rows):
            self._tx.run(query, self._params(query, params)).consume()

    # -- primitives ------------------------------------------------------------------------------
    @_server_lost
    def _read(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        self._flush_batched()
        if self._tx is not None:  # inside a run: read its own writes
            return [list(r.values()) for r in self._tx.run(query, self._params(query, params))]
        records, _, _ = self._driver.execute_query(
            query, self._params(query, params), database_=self.database, routing_=self._neo4j.RoutingControl.READ
        )
        return [list(r.values()) for r in records]

    @_server_lost
    def _write(self, query: str, params: dict[str, Any] | None = None) -> None:
        self._check_lease()
        self._flush_batched()
        if self._tx is not None:
            self._tx.run(query, self._params(query, params)).consume()
            return
        self._driver.execute_query(query, self._params(query, params), database_=self.database)

    @_server_lost
    def _write_all(self, statements: list[Statement]) -> None:
        self._check_lease()
        self._flush_batched()
        if self._tx is not None:  # already all or nothing: the run's transaction
            for query, params in statements:
                self._tx.run(query, self._params(query, params)).consume()
            return

        def work(tx) -> None:  # a managed transaction: the driver retries it on transient failures
            for query, params in statements:
                tx.run(query, self._params(query, params)).consume()

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
        from neo4j.exceptions import ServiceUnavailable, SessionExpired, TransientError

        try:
            with self._driver.session(database=self.database) as session:
                tx = session.begin_transaction()
                self._tx = tx
                try:
                    if full:
                        for statement in _DELETE_GRAPH:
                            tx.run(statement, {"repo": self.repo_key}).consume()
                    if dimension is not None:
                        self._write(q.SET_META, {"key": "dimension", "value": str(dimension)})
                        self._write(q.SET_META, {"key": "schema", "value": SCHEMA_VERSION})
                    self._batched = _Batched() if full and self.bulk_rows else None
                    yield
                    self._flush_batched()
                    self._confirm_lease(tx)
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
                    self._batched = None
        except (ServiceUnavailable, SessionExpired) as exc:
            raise _lost(self.uri, exc) from exc
        except TransientError as exc:
            if "MemoryPoolOutOfMemory" not in (exc.code or ""):
                raise
            raise StoreError(
                f"Neo4j at {self.uri} has not the memory for this run's transaction ({_first_line(exc.message)});"
                " nothing was written and the previous graph is as it was: raise db.memory.transaction.max"
                " and db.memory.transaction.total.max on the server (docs/neo4j.md)"
            ) from exc

    def _cast(self, dimension: int) -> str:
        return "{}"  # vectors are plain list properties

    def ensure_schema(self, dimension: int) -> None:
        self._create_indexes(dimension, replace_vectors=False)
        self.set_meta("dimension", str(dimension))
        self.set_meta("schema", SCHEMA_VERSION)

    def _create_indexes(self, dimension: int, replace_vectors: bool) -> None:
        """Constraints, property, vector and full-text indexes, each only when missing (outside any
        transaction that writes data, as Neo4j requires). This repository's graph from an older cg is
        removed first; vectors of another width are an error, unless ``replace_vectors`` (a full run)."""
        self._forget_legacy_graph()
        built = self.get_meta("schema")
        if built is not None and built != SCHEMA_VERSION:
            self.reset()  # this repository's graph is from an older cg: start it over (the others stay)
        current = self.get_meta("dimension")
        if current is not None and int(current) != dimension and not replace_vectors:
            raise StoreError(
                f"the graph holds {current}-d embeddings but the model gives {dimension}-d; "
                "rebuild with `cg index --rebuild`"
            )  # a full run rebuilds: _fit_vector_indexes remakes the indexes unless others use them
        self._dimension = int(dimension)
        for label in (*NODE_LABELS, "Meta"):
            key = "key" if label == "Meta" else "id"
            self._ddl(
                f"CREATE CONSTRAINT {label.lower()}_repo_{key}_unique IF NOT EXISTS"
                f" FOR (n:{label}) REQUIRE (n.repo, n.{key}) IS UNIQUE"
            )
        for name, (label, props) in LOOKUP_INDEXES.items():
            on = ", ".join(f"n.{prop}" for prop in props)
            self._ddl(f"CREATE INDEX {name} IF NOT EXISTS FOR (n:{label}) ON ({on})")
        self._fit_vector_indexes(self._dimension)
        for (label, prop), index in VECTOR_INDEXES.items():
            self._ddl(
                f"CREATE VECTOR INDEX {index} IF NOT EXISTS FOR (n:{label}) ON n.{prop}"
                f" OPTIONS {{indexConfig: {{`vector.dimensions`: {self._dimension},"
                " `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}}"
            )
        for (label, prop), index in FULLTEXT_INDEXES.items():
            self._ddl(
                f"CREATE FULLTEXT INDEX {index} IF NOT EXISTS FOR (n:{label}) ON EACH [n.{prop}]"
                " OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace'}}"
            )
        self._write("CALL db.awaitIndexes(300)")

    def _forget_legacy_graph(self) -> None:
        """A graph written before repository keys (schema 6 and older) belongs to no repository and its
        one-id-per-label constraints would refuse a second repository's ``README.md``: its nodes and
        constraints are removed (the next ``cg index`` of that repository rebuilds it, keyed)."""
        legacy = {f"{label.lower()}_id_unique" for label in NODE_LABELS} | {"meta_key_unique"}
        names = {r[0] for r in self._read("SHOW CONSTRAINTS YIELD name RETURN name")}
        if not names & legacy and not self._read("MATCH (m:Meta) WHERE m.repo IS NULL RETURN m.key LIMIT 1"):
            return
        for label in (*NODE_LABELS, "Meta"):
            self._auto_commit(
                f"MATCH (n:{label}) WHERE n.repo IS NULL CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF 5000 ROWS"
            )
        for statement in LEGACY_SCHEMA:
            self._ddl(statement)

    def _fit_vector_indexes(self, dimension: int) -> None:
        """The vector indexes have one dimension for the whole database. When they were made for another
        one: remade if no other repository uses them, else one line (the model must match theirs). One
        made with quantization (a cg before ``VECTOR_WIDEN``, or Neo4j's default) is remade without it,
        whoever uses it: Neo4j fills the new index from the nodes' vectors, which stay as they are."""
        rows = self._read(
            "SHOW VECTOR INDEXES YIELD name, options WHERE name IN $names"
            " RETURN name, options.indexConfig['vector.dimensions'],"
            " options.indexConfig['vector.quantization.enabled']",
            {"names": list(VECTOR_INDEXES.values())},
        )
        wrong = [name for name, dim, _ in rows if dim is not None and int(dim) != dimension]
        quantized = [name for name, _, on in rows if on is True and name not in wrong]
        others = [r[0] for r in self._read(_OTHER_REPOSITORIES, {"repo": self.repo_key})] if wrong else []
        if others:
            have = next(int(dim) for name, dim, _ in rows if name in wrong)
            raise StoreError(
                f"the vector indexes of Neo4j database {self.database!r} hold {have}-d vectors for"
                f" {', '.join(repr(o) for o in others[:3])}{' and more' if len(others) > 3 else ''}; the model"
                f" gives {dimension}-d: use a {have}-d model or a database of its own (NEO4J_DATABASE)"
            )
        for name in [*wrong, *quantized]:
            self._ddl(f"DROP INDEX {name} IF EXISTS")

    def _ddl(self, statement: str) -> None:
        """A schema statement; writers of other repositories may run the same one at the same moment,
        and ``IF NOT EXISTS`` / ``IF EXISTS`` then lose the race with an error that means it is done."""
        from neo4j.exceptions import ClientError

        try:
            self._write(statement)
        except ClientError as exc:
            if not (already_exists(exc) or str(exc.code).endswith("NotFound")):
                raise

    def _auto_commit(self, query: str, params: dict[str, Any] | None = None) -> None:
        """A statement that commits as it goes (``CALL ... IN TRANSACTIONS`` runs only outside one)."""
        self._check_lease()
        with self._driver.session(database=self.database) as session:
            session.run(query, self._params(query, params)).consume()

    @_server_lost
    def reset(self) -> None:
        """Remove this repository's graph; the other repositories', the shared indexes and the lease stay."""
        for label in (*NODE_LABELS, "Meta"):
            self._auto_commit(
                f"MATCH (n:{label} {{repo: $repo}}) CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF 5000 ROWS"
            )

    # -- the lease -----------------------------------------------------------------------------------
    @contextmanager
    def lease(self, wait: float = 0.0) -> Iterator[None]:
        """Hold this repository's write lease for the block (cg/graph/lease.py); LeaseHeld when another
        writer has it and ``wait`` seconds did not see it free."""

        def run(query: str, params: dict[str, Any]) -> list[list[Any]]:
            records, _, _ = self._driver.execute_query(query, params, database_=self.database)
            return [list(r.values()) for r in records]

        with Lease(run, self.repo_key, self._lease_seconds, wait) as held:
            self._lease = held
            try:
                yield
            finally:
                self._lease = None

    def _check_lease(self) -> None:
        if self._lease is not None:
            self._lease.check()

    def _confirm_lease(self, tx: Any) -> None:
        """Inside the run's transaction, just before it commits: the lease is still this run's (a
        writer whose lease ran out while it was paused must not commit over its successor's graph)."""
        if self._lease is None:
            return
        self._lease.check()
        held = tx.run(_STILL_HELD, {"repo": self.repo_key, "token": self._lease.token}).single()
        if not held or not held[0]:
            raise StoreError(f"stopped writing repository {self.repo_key!r}: its lease passed to another writer")

    # -- reads -----------------------------------------------------------------------------------
    def _scoped_hits(self, call: str, params: dict[str, Any], limit: int, widen: int = 1) -> list[tuple[str, float]]:
        """This repository's top ``limit`` of an index ``call`` that ranks every repository's nodes:
        fetch ``widen`` x ``limit``, then four times more each round, until ``limit`` of ours are among
        them or the index returned fewer than asked (it has no more). One round when the database holds
        one repository; about log4(share) more when ours is a small share of it."""
        fetch = max(limit, 1) * widen
        while True:
            seen, hits = self._read(
                f"{call} WITH count(*) AS seen,"
                " collect(CASE WHEN node.repo = $repo THEN [node.id, score] END) AS hits RETURN seen, hits",
                {**params, "fetch": fetch},
            )[0]
            if len(hits) >= limit or seen < fetch:
                ranked = sorted(((h[0], float(h[1])) for h in hits), key=lambda h: (-h[1], h[0]))
                return ranked[:limit]
            fetch *= 4

    def fulltext(
        self, analyzed_query: str, limit: int, label: str = "Symbol", field: str = "search_text"
    ) -> list[tuple[str, float]]:
        if not analyzed_query.strip():
            return []
        index = FULLTEXT_INDEXES[text_field(label, field)]
        call = f"CALL db.index.fulltext.queryNodes('{index}', $q, {{limit: $fetch}}) YIELD node, score"
        return self._scoped_hits(call, {"q": analyzed_query}, limit)

    def vector(
        self, embedding: np.ndarray, limit: int, label: str = "Symbol", prop: str = "embedding"
    ) -> list[tuple[str, float]]:
        index = VECTOR_INDEXES[vector_prop(label, prop)]
        call = f"CALL db.index.vector.queryNodes('{index}', $fetch, $q) YIELD node, score"
        hits = self._scoped_hits(call, {"q": [float(x) for x in embedding]}, limit, VECTOR_WIDEN)
        return [(node_id, 2.0 * score - 1.0) for node_id, score in hits]  # (1 + cos) / 2 -> cos

    @_server_lost
    def cypher(
        self, query: str, params: dict[str, Any] | None = None, write: bool = False
    ) -> tuple[list[str], list[list[Any]]]:
        from neo4j.exceptions import Neo4jError

        params = self._params(query, params)  # $repo is this store's key unless the caller gave one
        query = vet(query, params, write)  # the allow-list, before the server sees any of it
        mode = self._neo4j.WRITE_ACCESS if write else self._neo4j.READ_ACCESS
        if write and self._tx is not None:  # `cg cypher --write` is a run of its own (cg/api.py)
            try:
                result = self._tx.run(query, self._params(query, params))
                return list(result.keys()), [[_plain(v) for v in record.values()] for record in result]
            except Neo4jError as exc:
                raise StoreError(_first_line(exc.message or str(exc))) from exc
        try:
            with self._driver.session(database=self.database, default_access_mode=mode) as session:
                if not write:  # the second gate: Neo4j's own planner must call it a read ("r")
                    plan = session.run(plan_query(query), self._params(query, params)).consume()
                    kind = str(plan.query_type)
                    if kind != "r":
                        raise QueryRefused(
                            f"read-only Cypher refuses this query: Neo4j plans it as {_KINDS.get(kind, kind)}"
                        )
                result = session.run(query, self._params(query, params))
                columns = list(result.keys())
                rows = [[_plain(v) for v in record.values()] for record in result]
        except Neo4jError as exc:
            raise StoreError(_first_line(exc.message or str(exc))) from exc
        return columns, rows

    # -- the other repositories ------------------------------------------------------------------------
    def repositories(self) -> list[str]:
        return [r[0] for r in self._read(_REPOSITORIES)]

    def for_repo(self, key: str) -> Neo4jStore:
        """A reader of repository ``key`` over this store's connection (closing it leaves that open)."""
        view = copy.copy(self)
        view.repo_key, view._lease, view._owns_driver = key, None, False
        return view

    def close(self) -> None:
        from neo4j.exceptions import DriverError

        if not self._owns_driver:
            return
        try:
            self._driver.close()
        except (DriverError, OSError):  # the server is already gone: nothing left to release
            pass


# The repositories that hold a graph in this database (their schema marker), all or the others.
_REPOSITORIES = "MATCH (m:Meta) WHERE m.key = 'schema' RETURN m.repo ORDER BY m.repo"
_OTHER_REPOSITORIES = "MATCH (m:Meta) WHERE m.key = 'schema' AND m.repo <> $repo RETURN m.repo ORDER BY m.repo"


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
