"""One Neo4j database, many repositories: each store reads and writes only its own repository's nodes,
every shared statement seeks an index by repository, and a writer holds its repository's lease."""

from __future__ import annotations

import inspect
import subprocess
import sys
import threading
import time
from dataclasses import replace

import pytest

from cg.graph import cypher
from cg.graph.lease import Lease, LeaseHeld
from cg.graph.neo4j_store import Neo4jStore
from cg.graph.store import StoreError
from cg.lexical import analyze_text
from cg.model import Edge
from tests.graph.test_store_conformance import BACKOFF, DIM, HANDLER, RETRY, populate, sym, vec, write
from tests.neo4j_env import REQUIRED, neo4j_settings

pytestmark = [pytest.mark.neo4j] + (
    [] if REQUIRED else [pytest.mark.skip(reason="Neo4j tests run under scripts/test (CG_TEST_NEO4J=1)")]
)
SHOP, BILLING = "github.com/acme/shop", "github.com/acme/billing"


@pytest.fixture
def stores(tmp_path):
    """Two stores on the one database, for two repositories (emptied before and after)."""
    opened = {key: Neo4jStore(replace(neo4j_settings(tmp_path), repo_key=key)) for key in (SHOP, BILLING)}
    for store in opened.values():
        store.reset()
    yield opened
    for store in opened.values():
        store.reset()
        store.close()


def _reader(tmp_path, key: str) -> Neo4jStore:
    return Neo4jStore(replace(neo4j_settings(tmp_path), repo_key=key), read_only=True)


def test_two_repositories_with_the_same_ids_stay_apart(stores, tmp_path):
    shop, billing = stores[SHOP], stores[BILLING]
    populate(shop)
    populate(billing)  # the very same paths and ids in the other repository
    write(billing, "shop/ledger.py", [sym("shop/ledger.py", "post_refund")], [vec(5)])
    one = shop.stats()
    assert one["Symbol"] == 3 and one["CALLS"] == 3 and one["File"] == 2 and one["External"] == 1
    assert billing.stats()["Symbol"] == 4 and billing.stats()["File"] == 3
    assert set(shop.file_shas()) == {"shop/retry.py", "shop/hooks.py"}
    assert [c.src for c in shop.calls([RETRY.id], "in")] == [HANDLER.id]

    billing.delete_files(["shop/hooks.py"])  # gone from billing only
    assert billing.calls([RETRY.id], "in") == [] and [c.src for c in shop.calls([RETRY.id], "in")] == [HANDLER.id]
    billing.delete_edges(["shop/retry.py"])
    assert billing.prune_externals() == 1 and shop.stats()["External"] == 1
    assert shop.stats() == one

    billing.reset()
    assert billing.stats()["Symbol"] == 0 and shop.stats() == one
    assert billing.get_meta("schema") is None and shop.get_meta("schema") is not None


def test_a_users_cypher_gets_repo_and_the_documented_filter_scopes_it(stores, tmp_path):
    populate(stores[SHOP])
    populate(stores[BILLING])
    with _reader(tmp_path, SHOP) as reader:
        scoped = "MATCH (a:Symbol)-[:CALLS]->(b:Symbol) WHERE a.repo = $repo RETURN a.repo, count(*)"
        assert reader.cypher(scoped)[1] == [[SHOP, 2]]
        everything = "MATCH (a:Symbol)-[:CALLS]->(b:Symbol) RETURN a.repo AS repo, count(*) ORDER BY repo"
        every = reader.cypher(everything)[1]  # across all repositories: on request only
        assert [BILLING, 2] in every and [SHOP, 2] in every
        assert reader.cypher(scoped, {"repo": BILLING})[1] == [[BILLING, 2]]  # a given $repo wins


def test_index_search_finds_k_of_this_repository_among_many_of_others(stores):
    """Vector and full-text indexes rank every repository's nodes: billing's 60 nearer, better-matching
    definitions must not crowd shop's three out of its top 3."""
    shop, billing = stores[SHOP], stores[BILLING]
    populate(shop)
    billing.ensure_schema(DIM)
    crowd = [sym("shop/retry.py", f"schedule_payment_retry_{n}", doc="retry failed payment") for n in range(60)]
    write(billing, "shop/retry.py", crowd, [vec(1) for _ in crowd])
    hits = shop.vector(vec(1), 3)
    assert [h[0] for h in hits][0] == BACKOFF.id and {h[0] for h in hits} == {RETRY.id, BACKOFF.id, HANDLER.id}
    assert hits[0][1] == pytest.approx(1.0, abs=1e-5)
    words = analyze_text("schedule_payment_retry failed payment")
    assert shop.fulltext(words, 2)[0][0] == RETRY.id and len(shop.fulltext(words, 2)) == 2
    assert len(billing.fulltext(words, 50)) == 50
    assert shop.fulltext(analyze_text("nothing matches this"), 5) == []


def test_a_reader_of_a_repository_with_no_graph_is_one_line(stores, tmp_path):
    populate(stores[SHOP])
    with pytest.raises(
        StoreError, match=r"no complete index yet of repository 'github.com/acme/coupons' .* run `cg index`"
    ):
        _reader(tmp_path, "github.com/acme/coupons")


def test_an_unkeyed_graph_from_an_older_cg_is_removed_by_the_first_keyed_index(stores):
    shop = stores[SHOP]
    populate(shop)
    shop._write("CREATE (:Symbol {id: 'shop/retry.py::legacy'}), (:Meta {key: 'schema', value: '6'})")
    shop._write("CREATE INDEX symbol_path IF NOT EXISTS FOR (n:Symbol) ON (n.path)")  # schema 6's lookup
    populate(stores[BILLING])  # ensure_schema: the unkeyed nodes and the old schema go
    assert shop._read("MATCH (n) WHERE n.repo IS NULL AND NOT n:IndexLock RETURN count(n)") == [[0]]
    names = {r[0] for r in shop._read("SHOW INDEXES YIELD name RETURN name")}
    assert "symbol_path" not in names and "symbol_repo_path" in names and "symbol_repo_id_unique" in names
    assert shop.stats()["Symbol"] == 3  # the keyed graphs stay


def _vector_indexes(store: Neo4jStore) -> dict[str, tuple[int, bool]]:
    rows = store._read(
        "SHOW VECTOR INDEXES YIELD name, options RETURN name, options.indexConfig['vector.dimensions'],"
        " options.indexConfig['vector.quantization.enabled']"
    )
    return {name: (int(dim), bool(on)) for name, dim, on in rows}


def test_a_quantized_vector_index_is_remade_exact_and_refilled_from_the_vectors(stores):
    """Neo4j 5.26 quantizes a vector index unless told not to, and its scores then differ from exact
    cosine by up to 0.005 (enough to swap neighbours and so a flow's seeds). An index an earlier cg made
    that way is remade without quantization when the schema is ensured, and the vectors already on the
    nodes fill it: no re-index needed."""
    shop = stores[SHOP]
    populate(shop)
    shop._ddl("DROP INDEX symbol_embedding IF EXISTS")
    shop._ddl(
        f"CREATE VECTOR INDEX symbol_embedding FOR (n:Symbol) ON n.embedding OPTIONS {{indexConfig:"
        f" {{`vector.dimensions`: {DIM}, `vector.similarity_function`: 'cosine',"
        " `vector.quantization.enabled`: true}}"
    )
    assert _vector_indexes(shop)["symbol_embedding"] == (DIM, True)
    shop.ensure_schema(DIM)  # what the next run does first
    indexes = _vector_indexes(shop)
    assert indexes["symbol_embedding"] == (DIM, False)
    assert all(indexes[name] == (DIM, False) for name in indexes if name in ("chunk_embedding", "doc_embedding"))
    hits = shop.vector(vec(1), 3)
    assert [h[0] for h in hits][0] == BACKOFF.id and hits[0][1] == pytest.approx(1.0, abs=1e-6)


def test_a_model_of_another_width_is_refused_in_one_line_beside_another_repository(stores):
    """The vector indexes are the database's: another repository's 384-d vectors keep them, and a run
    with an 8-d model is told which repository holds them and what to do (the database may hold other
    tests' repositories too, so only the refusal is checked here, not a remake)."""
    shop, billing = stores[SHOP], stores[BILLING]
    populate(billing)
    with pytest.raises(StoreError, match=r"hold 384-d vectors for .*; the model gives 8-d: use a 384-d model") as no:
        shop.ensure_schema(8)
    assert "\n" not in str(no.value)
    assert _vector_indexes(shop)["symbol_embedding"] == (DIM, False)  # billing's index is kept
    populate(shop)
    assert shop.vector(vec(1), 1)[0][0] == BACKOFF.id


def _shared_statements() -> list[str]:
    """Every statement of cg/graph/cypher.py, the parametrised ones for each valid argument."""
    out: list[str] = []
    for name, value in vars(cypher).items():
        if isinstance(value, str) and value.startswith(("MATCH", "MERGE", "UNWIND")):
            out.append(value)
        elif isinstance(value, tuple) and value and all(isinstance(v, str) and " " in v for v in value):
            out.extend(value)
        elif inspect.isfunction(value) and value.__module__ == cypher.__name__:
            params = list(inspect.signature(value).parameters)
            if params == ["cast"]:
                out.append(value("{}"))
            elif name == "create_edges":
                out.extend(value("CALLS", "Symbol", dst) for dst in ("Symbol", "External"))
            elif name == "create_touches":
                out.extend(value(label) for label in ("File", "Symbol"))
            elif name == "count_edges":
                out.extend(value(rel, src) for rel, srcs in cypher.EDGE_SOURCES.items() for src in srcs)
            elif name == "node_ids_and":
                out.extend(value(label, "search_text") for label in cypher.NODE_LABELS)
            elif name in ("nodes_by_id", "count_nodes"):
                out.extend(value(label) for label in cypher.NODE_LABELS)
    return out


def _operators(plan) -> list[str]:
    return [plan.get("operatorType", "")] + [op for child in plan.get("children", []) for op in _operators(child)]


def test_every_shared_statement_seeks_an_index_by_repository(stores):
    """No statement scans a label or the whole store: with many repositories in the database, a scan
    would cost every repository's nodes on each call. (A scan of a rare relationship type, TOUCHES or
    INHERITS here, is the cost-based planner's choice while there are few of them, and is allowed.)"""
    stores[SHOP].ensure_schema(DIM)
    statements = _shared_statements()
    assert len(statements) > 50
    scans = []
    with stores[SHOP]._driver.session(database=stores[SHOP].database) as session:
        for statement in statements:
            plan = session.run("EXPLAIN " + statement).consume().plan
            ops = [op.split("@")[0] for op in _operators(plan)]
            if any(op in ("NodeByLabelScan", "AllNodesScan") for op in ops):
                scans.append((statement, ops))
    assert not scans


# -- the lease -----------------------------------------------------------------------------------------
def _run(store: Neo4jStore):
    def run(query, params):
        records, _, _ = store._driver.execute_query(query, params, database_=store.database)
        return [list(r.values()) for r in records]

    return run


def test_a_second_writer_of_the_same_repository_fails_in_one_line_naming_the_holder(stores):
    shop = stores[SHOP]
    with shop.lease():
        with pytest.raises(LeaseHeld) as refused:
            Lease(_run(shop), SHOP, seconds=60).__enter__()
        message = str(refused.value)
        assert "\n" not in message and f"repository {SHOP!r} is being indexed by pid" in message
        assert "lease runs out in" in message and "--wait" in message
        with stores[BILLING].lease():  # another repository: no waiting
            pass
    with Lease(_run(shop), SHOP, seconds=60):  # released at the end of the first
        pass


def test_a_waiting_writer_gets_the_lease_when_it_is_released(stores):
    shop = stores[SHOP]
    first = Lease(_run(shop), SHOP, seconds=60).__enter__()
    threading.Timer(1.5, first.__exit__, (None, None, None)).start()
    started = time.monotonic()
    with Lease(_run(shop), SHOP, seconds=60, wait=20, poll=0.2):
        assert 1.0 < time.monotonic() - started < 10
    with pytest.raises(LeaseHeld, match="after waiting 0.5 s"), shop.lease():
        Lease(_run(shop), SHOP, seconds=60, wait=0.5, poll=0.1).__enter__()


def test_a_crashed_writers_lease_runs_out_and_is_taken_over(stores):
    shop = stores[SHOP]
    crashed = Lease(_run(shop), SHOP, seconds=1.5)
    crashed.space = "another-boot/4026531836"  # a writer on another machine: its pid cannot be checked here
    assert crashed.try_take() is None  # taken, and never renewed: its process died
    with pytest.raises(LeaseHeld):
        Lease(_run(shop), SHOP, seconds=60).__enter__()
    time.sleep(1.7)
    with Lease(_run(shop), SHOP, seconds=60) as successor:
        successor.check()


def _a_dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_live_writer_on_this_machine_keeps_its_lease_when_a_renewal_comes_late(stores):
    """Its heartbeat starved (a loaded machine, a server paused): the pid still runs, so nobody else
    may write beside it; the message says the lease was not renewed and names the pid."""
    shop = stores[SHOP]
    late = Lease(_run(shop), SHOP, seconds=1.0)
    assert late.try_take() is None  # this very process holds it, and never renews it
    time.sleep(1.3)
    with pytest.raises(LeaseHeld) as refused:
        Lease(_run(shop), SHOP, seconds=60, wait=0.5, poll=0.1).__enter__()
    assert f"was not renewed, but pid {late.pid} still runs" in str(refused.value)
    late.check()
    assert late.try_take() is None  # still its own: a late renewal renews
    late.__exit__(None, None, None)
    with Lease(_run(shop), SHOP, seconds=60):
        pass


@pytest.mark.parametrize("round_", range(8))
def test_two_writers_taking_over_a_dead_writers_lease_never_both_get_it(stores, round_):
    """A writer killed on this machine left its lease; two runs see the dead pid at the same moment.
    Exactly one takes it over; the other waits (before, both took it and one found at its commit that
    its lease had passed to the other)."""
    shop = stores[SHOP]
    dead = Lease(_run(shop), SHOP, seconds=60)
    dead.pid = _a_dead_pid()
    assert dead.try_take() is None
    takers = [Lease(_run(shop), SHOP, seconds=60) for _ in range(2)]
    start = threading.Barrier(len(takers))
    outcomes: dict[int, object] = {}

    def take(i: int) -> None:
        start.wait()
        outcomes[i] = takers[i].try_take()

    threads = [threading.Thread(target=take, args=(i,)) for i in range(len(takers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    winners = [i for i, holder in outcomes.items() if holder is None]
    assert len(outcomes) == 2 and len(winners) == 1, outcomes
    held = _run(shop)("MATCH (l:IndexLock {repo: $repo}) RETURN l.token", {"repo": SHOP})
    assert held == [[takers[winners[0]].token]]
    takers[winners[0]].__exit__(None, None, None)


def test_the_heartbeat_keeps_a_long_run_holding_and_a_lost_lease_stops_its_writes(stores):
    shop = stores[SHOP]
    shop.ensure_schema(DIM)
    with Lease(_run(shop), SHOP, seconds=1.5) as held:
        time.sleep(2.5)  # beyond one lease: the heartbeat renewed it
        with pytest.raises(LeaseHeld):
            Lease(_run(shop), SHOP, seconds=60).__enter__()
        held.check()
        shop._lease = held
        _run(shop)("MATCH (l:IndexLock {repo: $repo}) SET l.token = 'another-writer'", {"repo": SHOP})
        time.sleep(1.0)  # the next renewal finds another token
        with pytest.raises(StoreError, match=f"stopped writing repository '{SHOP}'.*run `cg index` again"):
            shop.write_edges([Edge("CALLS", RETRY.id, BACKOFF.id, "Symbol", "Symbol", 101, "scope")])
        shop._lease = None
    _run(shop)("MATCH (l:IndexLock {repo: $repo}) DELETE l", {"repo": SHOP})


def test_the_lease_is_not_left_behind(stores):
    shop = stores[SHOP]
    with shop.lease():
        pass
    assert _run(shop)("MATCH (l:IndexLock {repo: $repo}) RETURN count(l)", {"repo": SHOP}) == [[0]]


def test_a_run_bigger_than_the_servers_transaction_memory_fails_in_one_line_and_keeps_the_graph(stores):
    """A full run is one transaction; on a server whose transaction memory cannot hold it, Neo4j
    refuses it part-way (MemoryPoolOutOfMemoryError; Django 5.1.4 reached the test server's 716.8 MiB).
    That is the server's setting, not a bug of cg's: one StoreError line naming the settings, and the
    previous graph as it was. The run's transaction is made to outgrow the limit here by a read inside
    it that collects more than any test server's heap holds (the limit is a share of the heap)."""
    store = stores[SHOP]
    populate(store)
    before = store.stats()
    with pytest.raises(StoreError) as refused, store.run(full=True, dimension=DIM):
        write(store, "shop/ledger.py", [sym("shop/ledger.py", "post_entry")], [vec(3)])
        store._read("UNWIND range(1, 400000000) AS i WITH collect(i) AS held RETURN size(held)")
    message = str(refused.value)
    assert "db.memory.transaction.max" in message and "previous graph is as it was" in message, message
    assert "\n" not in message
    assert store.stats() == before


def test_the_driver_decodes_bolt_in_rust():
    """cg installs neo4j-rust-ext, Neo4j's own Rust build of the driver's Bolt codec: explain reads
    candidates' vectors, and the driver's Python codec decoded each float in Python (explain on
    examples/shop: benchmarks/latency.py, RESULTS.md "Answer latency")."""
    from neo4j._codec.packstream import v1

    assert v1._rust_unpack is not None and v1._rust_pack is not None
