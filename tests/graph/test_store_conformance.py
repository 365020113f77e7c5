"""The GraphStore contract, run against every backend: writes, re-writes, deletes, vector search,
full-text search, traversal, read-only Cypher and closing; and that the backends share their statements."""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from cg.graph.store import FileWrite, GraphStore, StoreError
from cg.lexical import analyze_text
from cg.model import Chunk, Edge, External, FileRecord, Symbol

DIM = 384  # the default model's width: on Neo4j the vector indexes are the database's, shared with the other tests


def vec(*hot: int) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    for i in hot:
        v[i] = 1.0
    return v / np.linalg.norm(v)


def sym(path: str, scope: str, kind: str = "function", doc: str = "", parent: str = "") -> Symbol:
    name = scope.rsplit(".", 1)[-1]
    module = path[:-3].replace("/", ".")
    text = f"def {name}():\n    pass"
    return Symbol(
        id=f"{path}::{scope}",
        name=name,
        qualname=f"{module}.{scope}",
        kind=kind,
        path=path,
        start_line=10,
        end_line=12,
        signature=f"def {name}()",
        docstring=doc,
        text=text,
        parent_id=parent or f"{path}::<module>",
        search_text=analyze_text(f"{name} {doc}"),
    )


def write(store, path: str, symbols: list[Symbol], vectors: list[np.ndarray], externals=(), chunks=(), docs=None):
    record = FileRecord(path, "python", "source", "sha-" + path, 20, path[:-3].replace("/", "."))
    chunk_vectors = np.vstack([vec(7)] * len(chunks)) if chunks else None
    store.write_file(
        FileWrite(
            record,
            symbols,
            np.vstack(vectors),
            list(externals),
            chunks=list(chunks),
            chunk_embeddings=chunk_vectors,
            doc_embeddings=docs,
        )
    )


RETRY = sym("shop/retry.py", "schedule_payment_retry", doc="Enqueue the next retry of a failed payment.")
BACKOFF = sym("shop/retry.py", "compute_backoff")
HANDLER = sym("shop/hooks.py", "handle_invoice_payment_failed", doc="Stripe webhook for failed invoices.")


def populate(store):
    store.ensure_schema(DIM)
    write(store, "shop/retry.py", [RETRY, BACKOFF], [vec(0), vec(1)], [External("builtins.max", "max")])
    write(store, "shop/hooks.py", [HANDLER], [vec(2)])
    store.write_edges(
        [
            Edge("CALLS", HANDLER.id, RETRY.id, "Symbol", "Symbol", 60, "import"),
            Edge("CALLS", RETRY.id, BACKOFF.id, "Symbol", "Symbol", 101, "scope"),
            Edge("CALLS", RETRY.id, "builtins.max", "Symbol", "External", 108, "builtin"),
            Edge("DEFINES", "shop/retry.py", RETRY.id, "File", "Symbol", 10),
        ]
    )


def test_write_and_traverse(store_factory):
    store = store_factory()
    populate(store)
    assert store.stats()["Symbol"] == 3 and store.stats()["CALLS"] == 3
    callers = store.calls([RETRY.id], "in")
    assert [(c.src, c.line, c.resolved_by) for c in callers] == [(HANDLER.id, 60, "import")]
    assert callers[0].other["qualname"] == "shop.hooks.handle_invoice_payment_failed"
    callees = {c.dst: c for c in store.calls([RETRY.id], "out")}
    assert set(callees) == {BACKOFF.id, "builtins.max"}
    assert callees["builtins.max"].other_label == "External"
    assert callees[BACKOFF.id].other["path"] == "shop/retry.py"


def test_an_ambiguous_call_keeps_its_candidate_count(store_factory):
    store = store_factory()
    populate(store)
    write(store, "shop/hooks.py", [HANDLER], [vec(2)], [External("report_failure", "report_failure", False)])
    store.write_edges(
        [Edge("CALLS", HANDLER.id, "report_failure", "Symbol", "External", 71, "ambiguous", 0.0, candidates=2)]
    )
    _, rows = store_factory(read_only=True).cypher(
        "MATCH (a:Symbol)-[c:CALLS]->(e:External {repo: $repo}) WHERE e.id = 'report_failure'"
        " RETURN a.id, c.resolved_by, c.candidates"
    )
    assert [list(r) for r in rows] == [[HANDLER.id, "ambiguous", 2]]


def test_rewrite_keeps_incoming_edges_and_drops_stale(store_factory):
    store = store_factory()
    populate(store)
    # compute_backoff is deleted from the file; schedule_payment_retry stays (same id)
    write(store, "shop/retry.py", [RETRY], [vec(0, 3)])
    assert store.symbols([BACKOFF.id]) == {}
    assert BACKOFF.id not in [doc for doc, _ in store.fulltext(analyze_text("compute_backoff"), 5)]
    assert store.fulltext(analyze_text("schedule_payment_retry"), 5)[0][0] == RETRY.id
    assert [c.src for c in store.calls([RETRY.id], "in")] == [HANDLER.id]  # incoming edge survives
    assert store.calls([RETRY.id], "out") == []  # outgoing edges are rewritten by the caller
    assert store.stats()["Symbol"] == 2


def test_delete_files(store_factory):
    store = store_factory()
    populate(store)
    store.delete_files(["shop/hooks.py"])
    assert store.file_shas() == {"shop/retry.py": "sha-shop/retry.py"}
    assert HANDLER.id not in [doc for doc, _ in store.fulltext(analyze_text(HANDLER.name), 5)]  # its text went too
    assert store.calls([RETRY.id], "in") == []


def test_vector_search_ranks_by_cosine(store_factory):
    store = store_factory()
    populate(store)
    hits = store.vector(vec(1), 3)
    assert hits[0][0] == BACKOFF.id and hits[0][1] == pytest.approx(1.0, abs=1e-5)
    assert {h[0] for h in hits[1:]} == {RETRY.id, HANDLER.id}


def test_fulltext_matches_split_and_whole_identifiers(store_factory):
    store = store_factory()
    populate(store)
    assert store.fulltext(analyze_text("schedule_payment_retry"), 5)[0][0] == RETRY.id
    assert store.fulltext(analyze_text("SchedulePaymentRetry"), 5)[0][0] == RETRY.id
    assert store.fulltext(analyze_text("webhook failed invoices"), 5)[0][0] == HANDLER.id
    # a later write is reflected without rebuilding the index
    write(store, "shop/hooks.py", [HANDLER, sym("shop/hooks.py", "verify_signature")], [vec(2), vec(4)])
    assert store.fulltext(analyze_text("verify signature"), 5)[0][0] == "shop/hooks.py::verify_signature"


def test_string_literals_are_a_full_text_field_of_their_own(store_factory):
    store = store_factory()
    populate(store)
    messages = ("coupon does not exist", "coupon has reached its redemption limit")
    limit = replace(sym("shop/coupons.py", "validate_coupon"), literals="\n".join(map(analyze_text, messages)))
    write(store, "shop/coupons.py", [limit], [vec(5)])
    hits = store.fulltext(analyze_text("redemption limit"), 5, "Symbol", "literals")
    assert [doc for doc, _ in hits] == [limit.id]  # the names and code of the others are not this field
    assert store.lexical_docs([limit.id], "Symbol", "literals") == {limit.id: limit.literals}
    assert store.fulltext(analyze_text("redemption limit"), 5) == []  # nor is it in search_text
    with pytest.raises(ValueError, match="no full-text index on Chunk.literals"):
        store.fulltext("coupon", 5, "Chunk", "literals")


def test_find_symbols_by_name_qualname_and_id(store_factory):
    store = store_factory()
    populate(store)
    assert [s["id"] for s in store.find_symbols("compute_backoff")] == [BACKOFF.id]
    assert [s["id"] for s in store.find_symbols("shop.retry.compute_backoff")] == [BACKOFF.id]
    assert [s["id"] for s in store.find_symbols(BACKOFF.id)] == [BACKOFF.id]
    assert store.find_symbols("refund_everything") == []


def test_read_only_cypher_refuses_writes(store_factory):
    store = store_factory()
    populate(store)
    reader = store_factory(read_only=True)
    columns, rows = reader.cypher(
        "MATCH (a:Symbol)-[:CALLS]->(b:Symbol) WHERE a.repo = $repo"
        " RETURN a.name AS caller, b.name AS callee ORDER BY caller"
    )
    assert columns == ["caller", "callee"]
    assert rows == [
        ["handle_invoice_payment_failed", "schedule_payment_retry"],
        ["schedule_payment_retry", "compute_backoff"],
    ]
    with pytest.raises(StoreError):
        reader.cypher("CREATE (:External {id: 'stripe.Charge', name: 'Charge', resolved: true})")
    with pytest.raises(StoreError):
        reader.cypher("MATCH (n RETURN n")  # bad syntax is an error on every backend


def fragment(owner: Symbol, n: int, words: str) -> Chunk:
    return Chunk(
        f"{owner.id}#fragment-{n}",
        owner.id,
        "fragment",
        owner.path,
        20 + n,
        30 + n,
        f"# fragment {n}\n{words}",
        analyze_text(words),
    )


def test_chunks_are_searchable_and_owned(store_factory):
    store = store_factory()
    populate(store)
    part = fragment(RETRY, 2, "ledger reconciliation after exhausted retries")
    write(store, "shop/retry.py", [RETRY, BACKOFF], [vec(0), vec(1)], chunks=[part])
    assert store.stats()["Chunk"] == 1
    assert store.fulltext(analyze_text("ledger reconciliation"), 5, "Chunk")[0][0] == part.id
    assert store.vector(vec(7), 1, "Chunk")[0][0] == part.id
    assert store.chunk_owners([part.id]) == {part.id: RETRY.id}
    assert store.lexical_docs([part.id], "Chunk") == {part.id: part.search_text}
    # a re-write replaces the file's chunks
    write(store, "shop/retry.py", [RETRY, BACKOFF], [vec(0), vec(1)], chunks=[fragment(RETRY, 3, "other words")])
    assert store.chunk_owners([part.id]) == {}
    assert store.stats()["Chunk"] == 1
    store.delete_files(["shop/retry.py"])
    assert store.stats()["Chunk"] == 0


def test_docstring_vectors_exist_only_where_there_is_a_docstring(store_factory):
    store = store_factory()
    store.ensure_schema(DIM)
    write(store, "shop/retry.py", [RETRY, BACKOFF], [vec(0), vec(1)], docs=[vec(5), None])
    hits = store.vector(vec(5), 5, "Symbol", "doc_embedding")
    assert [h[0] for h in hits] == [RETRY.id]
    assert hits[0][1] == pytest.approx(1.0, abs=1e-5)
    assert set(store.embeddings([RETRY.id, BACKOFF.id], "Symbol", "doc_embedding")) == {RETRY.id}


def _decorates_count(store) -> int:
    """Every DECORATES edge of the repository, duplicates counted (a set-based dump would hide them)."""
    return sum(1 for _ in store._read("MATCH (a:Symbol {repo: $repo})-[r:DECORATES]->(b:Symbol) RETURN r.line"))


def test_decorates_edges_belong_to_the_decorated_file(store_factory):
    """`@retry_on_decline` (shop/retry.py) on a handler in shop/hooks.py: resolving hooks.py found the edge,
    so rewriting hooks.py replaces it and rewriting retry.py leaves it, whichever file's edges are laid."""
    decorator = sym("shop/retry.py", "retry_on_decline", doc="Retry a charge the card network declined.")
    store = store_factory()
    populate(store)
    write(store, "shop/retry.py", [RETRY, BACKOFF, decorator], [vec(0), vec(1), vec(4)])
    decorates = Edge("DECORATES", decorator.id, HANDLER.id, "Symbol", "Symbol", 58, "import")
    store.write_edges([decorates, Edge("CALLS", RETRY.id, BACKOFF.id, "Symbol", "Symbol", 101, "scope")])
    assert store.decorators([HANDLER.id]) == [(decorator.id, HANDLER.id, 58)]
    assert store.decorators([decorator.id]) == []  # the edges into these symbols only
    assert store.stats()["DECORATES"] == 1
    _, rows = _read_cypher(
        store_factory, "MATCH (d:Symbol)-[r:DECORATES]->(f:Symbol {repo: $repo}) RETURN d.name, f.name, r.resolved_by"
    )
    assert [tuple(r) for r in rows] == [("retry_on_decline", "handle_invoice_payment_failed", "import")]
    store = store_factory()
    write(store, "shop/retry.py", [RETRY, BACKOFF, decorator], [vec(0), vec(1), vec(4)])  # the decorator's file
    assert store.calls([RETRY.id], "out") == [] and _decorates_count(store) == 1
    write(store, "shop/hooks.py", [HANDLER], [vec(2)])  # the decorated file: its edges are laid again
    assert _decorates_count(store) == 0
    store.write_edges([decorates])
    assert _decorates_count(store) == 1
    store.delete_edges(["shop/retry.py"])
    assert _decorates_count(store) == 1
    store.delete_edges(["shop/hooks.py"])
    assert _decorates_count(store) == 0
    store.write_edges([decorates])
    write(store, "shop/retry.py", [RETRY, BACKOFF], [vec(0), vec(1)])  # the decorator is gone
    assert _decorates_count(store) == 0 and store.decorators([HANDLER.id]) == []


def test_a_lambda_is_stored_without_a_vector(store_factory):
    """A lambda is a graph node (its calls, its citation) that neither search arm returns."""
    sort_key = replace(
        sym("shop/retry.py", "<lambda1>", kind="lambda", parent=RETRY.id),
        id="shop/retry.py::schedule_payment_retry.<lambda@3:30>",
        qualname="shop.retry.schedule_payment_retry.<lambda1>",
        text="lambda job: job.due_at",
        search_text="",
    )
    store = store_factory()
    store.ensure_schema(DIM)
    write(store, "shop/retry.py", [RETRY, sort_key, BACKOFF], [vec(0), vec(1)])  # vectors of the other two
    store.write_edges([Edge("CALLS", sort_key.id, BACKOFF.id, "Symbol", "Symbol", 103, "scope")])
    assert store.symbols([sort_key.id])[sort_key.id]["kind"] == "lambda"
    assert set(store.embeddings([RETRY.id, sort_key.id, BACKOFF.id])) == {RETRY.id, BACKOFF.id}
    assert store.embeddings([BACKOFF.id])[BACKOFF.id] == pytest.approx(vec(1))  # vectors stay with their symbols
    assert sort_key.id not in {h[0] for h in store.vector(vec(1), 10)}
    assert [c.dst for c in store.calls([sort_key.id], "out")] == [BACKOFF.id]
    with pytest.raises(ValueError, match="more symbol vectors"):
        write(store, "shop/retry.py", [RETRY, sort_key], [vec(0), vec(1)])


def test_repeated_externals_keep_their_own_names(store_factory):
    """Several files name the same library target: each External keeps the name of its own id."""
    store = store_factory()
    populate(store)
    names = ["stripe.Charge", "stripe.Refund", "stripe.Charge", "stripe.Webhook", "stripe.Refund", "builtins.max"]
    store.write_edges(
        [Edge("CALLS", RETRY.id, n, "Symbol", "External", 100 + i, "jedi") for i, n in enumerate(names)],
        [External(n, n.rsplit(".", 1)[-1]) for n in names],
    )
    columns, rows = _read_cypher(store_factory, "MATCH (e:External {repo: $repo}) RETURN e.id, e.name ORDER BY e.id")
    assert [tuple(r) for r in rows] == [(n, n.rsplit(".", 1)[-1]) for n in sorted(set(names))]


def _read_cypher(store_factory, query: str):
    return store_factory(read_only=True).cypher(query)


def test_delete_edges_and_prune_externals(store_factory):
    store = store_factory()
    populate(store)
    store.delete_edges(["shop/retry.py"])
    assert store.calls([RETRY.id], "out") == []
    assert [c.src for c in store.calls([RETRY.id], "in")] == [HANDLER.id]  # edges of other files stay
    assert store.prune_externals() == 1  # builtins.max: nothing points to it now
    assert store.stats()["External"] == 0


def test_docs_mentions_commits_and_touches(store_factory):
    from cg.model import CommitRecord, DocSection

    store = store_factory()
    populate(store)
    store.write_file(FileWrite(FileRecord("README.md", "markdown", "docs", "sha-r", 30), [], np.zeros((0, DIM))))
    retries = DocSection(
        "README.md::Shop > Retries", "README.md", "Retries", ("Shop", "Retries"), 5, 12,
        "Failed payments are retried by `schedule_payment_retry` with exponential backoff.",
        analyze_text("Retries failed payments retried schedule_payment_retry exponential backoff"),
    )  # fmt: skip
    setup = DocSection("README.md::Shop > Setup", "README.md", "Setup", ("Shop", "Setup"), 13, 20, "pip install", "pip")
    store.write_docs("README.md", [retries, setup], np.vstack([vec(0), vec(5)]))
    store.write_mentions(["README.md"], [(retries.id, RETRY.id)])
    assert store.docs_mentioning([RETRY.id, BACKOFF.id]) == {RETRY.id: [retries.id]}
    commit = CommitRecord(
        "a" * 40, "a" * 10, "Dana", 1_700_000_000, "Retry declined cards with backoff", "Retry declined cards",
        analyze_text("Retry declined cards with backoff"), (("shop/retry.py", ""), ("shop/retry.py", RETRY.id)),
    )  # fmt: skip
    store.write_commits([commit], np.vstack([vec(1)]))
    pairs = [(commit.id, "File", "shop/retry.py"), (commit.id, "Symbol", RETRY.id), (commit.id, "Symbol", "gone")]
    store.write_touches(pairs)
    store.write_touches(pairs)  # idempotent
    assert store.commit_ids() == {commit.id}
    touching = store.commits_touching([RETRY.id, BACKOFF.id])
    assert list(touching) == [RETRY.id] and touching[RETRY.id][0]["subject"] == commit.subject
    assert store.fulltext(analyze_text("declined cards"), 5, label="Commit")[0][0] == commit.id
    assert store.fulltext(analyze_text("exponential backoff"), 5, label="Doc")[0][0] == retries.id
    assert store.vector(vec(5), 1, label="Doc")[0][0] == setup.id
    assert store.nodes("Doc", [retries.id])[retries.id]["heading"] == "Shop > Retries"
    counts = store.stats()
    assert (counts["Doc"], counts["Commit"], counts["MENTIONS"], counts["TOUCHES"]) == (2, 1, 1, 2)
    # a rewrite drops sections that are gone; deleting the file drops the rest
    store.write_docs("README.md", [retries], np.vstack([vec(0)]))
    assert store.stats()["Doc"] == 1 and store.stats()["MENTIONS"] == 1
    assert store.fulltext(analyze_text("pip"), 5, label="Doc") == []
    store.write_commits([commit], np.vstack([vec(1)]))  # written again: still one commit to find
    assert [doc for doc, _ in store.fulltext(analyze_text("declined cards"), 5, label="Commit")] == [commit.id]
    store.delete_files(["README.md"])
    store.delete_commits([commit.id])
    assert store.fulltext(analyze_text("exponential backoff"), 5, label="Doc") == []
    assert store.fulltext(analyze_text("declined cards"), 5, label="Commit") == []
    counts = store.stats()
    assert (counts["Doc"], counts["Commit"], counts["MENTIONS"], counts["TOUCHES"]) == (0, 0, 0, 0)


GATEWAY = sym("shop/gw.py", "Gateway", kind="class")
GATEWAY_CHARGE = sym("shop/gw.py", "Gateway.charge", kind="method", parent="shop/gw.py::Gateway")
STRIPE = replace(sym("shop/gw.py", "StripeGateway", kind="class"), start_line=20, end_line=30)
STRIPE_CHARGE = replace(
    sym("shop/gw.py", "StripeGateway.charge", kind="method", parent="shop/gw.py::StripeGateway"),
    start_line=24,
    end_line=27,
)


def test_flow_and_impact_reads(store_factory):
    """The reads flow, impact and path are built on: caller counts, inheritance, members, importers
    and the definition around a line."""
    store = store_factory()
    populate(store)
    write(store, "shop/gw.py", [GATEWAY, GATEWAY_CHARGE, STRIPE, STRIPE_CHARGE], [vec(3), vec(3), vec(4), vec(4)])
    store.write_edges(
        [
            Edge("DEFINES", GATEWAY.id, GATEWAY_CHARGE.id, "Symbol", "Symbol", 11),
            Edge("DEFINES", STRIPE.id, STRIPE_CHARGE.id, "Symbol", "Symbol", 11),
            Edge("INHERITS", STRIPE.id, GATEWAY.id, "Symbol", "Symbol", 10, "jedi"),
            Edge("INHERITS", STRIPE.id, "builtins.object", "Symbol", "External", 10, "builtin"),
            Edge("CALLS", HANDLER.id, BACKOFF.id, "Symbol", "Symbol", 61, "jedi"),
            Edge("CALLS", HANDLER.id, BACKOFF.id, "Symbol", "Symbol", 62, "jedi"),
            Edge("IMPORTS", "shop/hooks.py", RETRY.id, "File", "Symbol", 3, "jedi"),
            Edge("IMPORTS", "shop/hooks.py", "shop/retry.py", "File", "File", 4, "jedi"),
        ]
    )
    # BACKOFF: called by RETRY and (twice) by HANDLER -> two distinct callers; nobody calls HANDLER
    assert store.caller_counts([BACKOFF.id, RETRY.id, HANDLER.id]) == {BACKOFF.id: 2, RETRY.id: 1}
    assert store.inherits([STRIPE.id], "out") == [(STRIPE.id, GATEWAY.id)]
    assert store.inherits([GATEWAY.id], "in") == [(STRIPE.id, GATEWAY.id)]
    assert store.inherits([HANDLER.id], "in") == []
    members = store.members([GATEWAY.id, STRIPE.id])
    assert sorted((m["parent_id"], m["id"], m["name"]) for m in members) == [
        (GATEWAY.id, GATEWAY_CHARGE.id, "charge"),
        (STRIPE.id, STRIPE_CHARGE.id, "charge"),
    ]
    assert sorted(store.importers([RETRY.id, "shop/retry.py", BACKOFF.id])) == [
        ("shop/hooks.py", "shop/retry.py", 4),
        ("shop/hooks.py", RETRY.id, 3),
    ]
    assert [s["id"] for s in store.symbols_at("shop/gw.py", 25)] == [STRIPE_CHARGE.id, STRIPE.id]
    assert [s["id"] for s in store.symbols_at("shop/gw.py", 21)] == [STRIPE.id]
    assert store.symbols_at("shop/gw.py", 99) == []


def test_a_store_is_a_context_manager_that_closes(store_factory):
    store = store_factory()
    with store as opened:
        assert opened is store
        populate(opened)
        opened.set_meta("indexed_at", "2024-05-01T09:30:00")
    with pytest.raises(Exception, match="(?i)closed"):  # Kùzu: RuntimeError, Neo4j: DriverError
        store.get_meta("indexed_at")
    with store_factory(read_only=True) as reader:  # what was written inside the block is there
        assert reader.get_meta("indexed_at") == "2024-05-01T09:30:00"
        assert [s["id"] for s in reader.find_symbols("compute_backoff")] == [BACKOFF.id]


def _statements(module) -> set[str]:
    """The MATCH/MERGE/UNWIND statements written in a module, f-string holes shown as ``{}``."""
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    in_fstrings = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
    texts = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            texts.add("".join(p.value if isinstance(p, ast.Constant) else "{}" for p in node.values))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in in_fstrings:
            texts.add(node.value)
    return {t for t in texts if re.match(r"(MATCH|MERGE|UNWIND)\b", t)}


def test_each_statement_is_written_once():
    """A statement both backends run lives in cg/graph/cypher.py; a backend module keeps only its own."""
    from cg.graph import cypher, kuzu_store, neo4j_store

    shared, kuzu, neo4j = (_statements(m) for m in (cypher, kuzu_store, neo4j_store))
    assert shared and kuzu and neo4j
    assert not kuzu & shared and not neo4j & shared and not kuzu & neo4j


def test_both_backends_implement_the_whole_protocol():
    from cg.graph.kuzu_store import KuzuStore
    from cg.graph.neo4j_store import Neo4jStore

    wanted = {name for name in dir(GraphStore) if not name.startswith("_")} | {"__enter__", "__exit__"}
    for store_class in (KuzuStore, Neo4jStore):
        missing = {name for name in wanted if not hasattr(store_class, name)}
        assert not missing, f"{store_class.__name__} lacks {sorted(missing)}"
        assert not getattr(store_class, "__abstractmethods__", None)


def test_every_shared_statement_names_the_repository():
    """One Neo4j database holds many repositories: a shared statement that matched a node without
    ``$repo`` would read or change another repository's graph."""
    from cg.graph import cypher

    unscoped = sorted(t for t in _statements(cypher) if "$repo" not in t)
    assert not unscoped


def test_a_kuzu_index_built_under_another_key_is_named_then_rebuilt(tmp_path):
    from cg.graph.kuzu_store import KuzuStore

    path = tmp_path / "shop" / ".cg" / "graph.kuzu"
    with KuzuStore(path, repo_key="github.com/acme/shop") as store:
        populate(store)
    with pytest.raises(StoreError, match="built for repository key 'github.com/acme/shop', not 'acme/shop-fork'"):
        KuzuStore(path, read_only=True, repo_key="acme/shop-fork")
    with KuzuStore(path, repo_key="acme/shop-fork") as store:
        store.ensure_schema(DIM)  # one repository per Kùzu database: the other key's graph is dropped
        assert store.stats()["Symbol"] == 0 and store.get_meta("schema") is not None
    with KuzuStore(path, read_only=True, repo_key="acme/shop-fork") as reader:
        assert reader.stats()["Symbol"] == 0
