"""Read-only Cypher on both stores, through the real CLI: every hostile statement of issue 14 is
refused in one line with a non-zero exit and changes nothing (no file in .cg, no file it names, the
graph the same), every reading query runs, ``--write`` still writes. The Neo4j variants run with
CG_TEST_NEO4J=1, and also check the server's own LOAD CSV restrictions (scripts/neo4j, docker/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cg.api import settings_for
from cg.graph.backends import open_store
from tests.cli.test_cli_neo4j import NEO4J, needs_server
from tests.conftest import cg_command, copy_shop
from tests.graphdump import dump
from tests.neo4j_env import neo4j_settings

# (statement, the word the one-line refusal names); {out} is a scratch directory outside the repo
HOSTILE = [
    ("LOAD EXTENSION '{out}/payments.kuzu_extension'", "LOAD"),
    ("LOAD FROM '/etc/passwd' RETURN *", "LOAD"),
    ("LOAD WITH HEADERS (name STRING) FROM '/etc/passwd' RETURN *", "LOAD"),
    ("COPY Symbol TO '{out}/symbols.csv'", "COPY"),
    ("COPY (MATCH (s:Symbol) RETURN s.text) TO '{out}/code.parquet'", "COPY"),
    ("EXPORT DATABASE '{out}/export'", "EXPORT"),
    ("IMPORT DATABASE '{out}/export'", "IMPORT"),
    ("ATTACH '{out}/invoices.kuzu' AS invoices (dbtype kuzu)", "ATTACH"),
    ("DETACH invoices", "DETACH"),
    ("USE invoices", "USE"),
    ("INSTALL httpfs", "INSTALL"),
    ("CHECKPOINT", "CHECKPOINT"),
    ("BEGIN TRANSACTION", "BEGIN"),
    ("CALL threads=1", "threads"),
    ("CALL spill_to_disk_tmp_file='{out}/spill'", "spill_to_disk_tmp_file"),
    ("MATCH (n) RETURN n; MATCH (n) RETURN n", "one Cypher statement"),
    ("MATCH (f:File) RETURN f.id LIMIT 1;\nMATCH (f:File) DETACH DELETE f", "one Cypher statement"),
    ("LOAD CSV FROM 'file:///etc/passwd' AS line RETURN line", "LOAD"),
    ("LOAD CSV FROM 'http://127.0.0.1:1/' AS line RETURN line", "LOAD"),
    ("MATCH (s:Symbol) LOAD CSV FROM 'http://127.0.0.1:1/' + s.name AS line RETURN line", "LOAD"),
    ("TERMINATE TRANSACTIONS 'neo4j-transaction-1'", "TERMINATE"),
    ("SHOW TRANSACTIONS YIELD transactionId RETURN transactionId", "SHOW"),
    ("CALL db.clearQueryCaches()", "db.clearQueryCaches"),
    ("CALL `db`.`clearQueryCaches`()", "db.clearQueryCaches"),
    ("CALL dbms.setConfigValue('db.logs.query.enabled', 'OFF')", "dbms.setConfigValue"),
    ("CALL CREATE_FTS_INDEX('Symbol', 'coupon_fts', ['name'])", "CREATE_FTS_INDEX"),
    ("CREATE (:External {id: 'stripe.Refund', name: 'Refund', resolved: true})", "CREATE"),
    ("MERGE (e:External {id: 'stripe.Refund'}) RETURN e.id", "MERGE"),
    ("MATCH (s:Symbol {name: 'validate_coupon'}) SET s.docstring = 'always valid'", "SET"),
    ("MATCH (c:Commit) DELETE c", "DELETE"),
    ("MATCH (f:File) DETACH DELETE f", "DETACH"),
    ("MATCH (s:Symbol) REMOVE s.docstring", "REMOVE"),
    ("MATCH (s:Symbol) FOREACH (x IN [1] | SET s.start_line = x)", "FOREACH"),
    ("CREATE MACRO coupon_discount(x) AS x * 2", "CREATE"),
    ("DROP TABLE Commit", "DROP"),
    ("ALTER TABLE Symbol ADD refunded BOOLEAN", "ALTER"),
    ("match (f:File) detach delete f", "DETACH"),
    # hidden: after a comment, after a string with a quote in it, inside a subquery, after UNION
    ("MATCH (s:Symbol) // only a comment\nDETACH DELETE s", "DETACH"),
    ("MATCH (s:Symbol) /* RETURN s */ SET s.name = 'charge'", "SET"),
    ("MATCH (s:Symbol) WHERE s.name = 'it\\'s' CREATE (:External {id: 'stripe.Refund'})", "CREATE"),
    ("MATCH (s:Symbol) WHERE EXISTS { MATCH (s) SET s.name = 'charge' } RETURN s.id", "SET"),
    ("MATCH (s:Symbol) CALL (s) { DETACH DELETE s } IN TRANSACTIONS", "DETACH"),
    ("MATCH (s:Symbol) CALL { CREATE (:External {id: 'stripe.Refund'}) } RETURN s.id", "CREATE"),
    ("MATCH (s:Symbol) RETURN s.id AS id UNION MATCH (f:File) SET f.loc = 0 RETURN f.id AS id", "SET"),
    ("CALL { USE system MATCH (n) RETURN n } RETURN 1", "USE"),
    ("EXPLAIN CREATE (:External {id: 'stripe.Refund'})", "CREATE"),
    ("PROFILE MATCH (s:Symbol) SET s.name = 'charge'", "SET"),
    ("MATCH (s:Symbol) RETURN s.id \u2028CREATE (:External {id: 'stripe.Refund'})", "CREATE"),
    ("MATCH (s:Symbol) RETURN s.id // a comment the database ends here\u2028CREATE (:External {id: 'x'})", "CREATE"),
    # bad input
    ("", "empty Cypher query"),
    ("  // nothing but a comment\n", "empty Cypher query"),
    ("MATCH (s:Symbol {name: $name}) RETURN s.id", "$name"),
    ("MATCH (s:Symbol) WHERE s.name = 'unterminated RETURN s", "unterminated string"),
]

# reading queries beyond docs/cypher.md (tests/cli/test_cypher_docs.py runs those): keywords inside
# strings, comments, quoted names, properties, map keys; a variable called like a statement; a `;`
READING = [
    "MATCH (s:Symbol) WHERE s.text CONTAINS 'CREATE' OR s.text CONTAINS 'DELETE' RETURN count(s) AS n",
    "MATCH (s:Symbol) WHERE s.docstring <> \"SET; LOAD CSV FROM 'file:///etc/passwd'\" RETURN count(s) AS n",
    "MATCH (s:Symbol) /* CREATE (x) */ RETURN count(s) AS n // DETACH DELETE s",
    "MATCH (commit:Commit)-[:TOUCHES]->(f:File) RETURN count(f) AS n",
    "MATCH (s:Symbol {name: 'validate_coupon'}) RETURN s.`name` AS name, {set: s.kind, load: s.path} AS summary",
    "MATCH (s:Symbol) RETURN count(s) AS n;",
    "MATCH (s:Symbol) RETURN count(s) AS n ; // done",
    "MATCH (f:Symbol) WHERE COUNT { MATCH (f)<-[:CALLS]-(:Symbol) } > 2 RETURN count(f) AS n",
    "MATCH (s:Symbol {name: 'validate_coupon'}) RETURN s.id AS id UNION ALL MATCH (f:File) RETURN f.id AS id",
    "UNWIND ['CREATE', 'DELETE'] AS word RETURN word",
    "MATCH (s:Symbol) WHERE s.name = 'it\\'s; DROP TABLE Symbol' OR s.name = 'validate_coupon' RETURN s.id",
]
READING_ON = {
    "kuzu": [
        "CALL show_tables() RETURN count(*) AS n",
        "CALL table_info('Symbol') RETURN count(*) AS n",
        "CALL show_indexes() RETURN count(*) AS n",
    ],
    "neo4j": [
        "CALL db.labels() YIELD label RETURN label",
        "CALL db.index.fulltext.queryNodes('symbol_search_text', 'coupon') YIELD node RETURN node.id AS id",
        "MATCH (f:Symbol {name: 'validate_coupon'}) CALL (f) { MATCH (t)-[:CALLS]->(f) RETURN count(t) AS n } RETURN n",
        "MATCH (s:Symbol) WHERE EXISTS { (s)-[:CALLS]->(:Symbol {name: 'validate_coupon'}) } RETURN s.id",
    ],
}


HOSTILE_CASES = [pytest.param(statement, named, id=statement[:60] or "empty") for statement, named in HOSTILE]


def _refused(result, named: str) -> None:
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cg: ") and named in lines[0], result.stderr
    assert "Traceback" not in result.stderr and not result.stdout


def _files(directory: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in directory.iterdir()}


@pytest.fixture(scope="module")
def kuzu_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A shop index of its own: the hostile statements must leave it exactly as it was."""
    repo = copy_shop(tmp_path_factory.mktemp("readonly") / "shop")
    cg_command("index", str(repo))
    return repo


def _kuzu_graph(repo: Path):
    with open_store(settings_for(repo, "kuzu"), read_only=True) as store:  # the current generation
        return dump(store)


@pytest.mark.parametrize(("statement", "named"), HOSTILE_CASES)
def test_hostile_cypher_is_refused_on_kuzu(kuzu_repo, tmp_path, statement, named):
    before, graph = _files(kuzu_repo / ".cg"), _kuzu_graph(kuzu_repo)
    result = cg_command("cypher", statement.replace("{out}", str(tmp_path)), "--repo", str(kuzu_repo), check=False)
    _refused(result, named)
    assert _files(kuzu_repo / ".cg") == before  # no WAL, no shadow file, nothing rewritten
    assert list(tmp_path.iterdir()) == []  # nothing exported, copied or attached
    assert _kuzu_graph(kuzu_repo) == graph


@pytest.mark.parametrize("query", READING + READING_ON["kuzu"])
def test_reading_cypher_runs_on_kuzu(kuzu_repo, query):
    rows = json.loads(cg_command("cypher", query, "--json", "--repo", str(kuzu_repo)).stdout)
    assert rows, query


def test_parameters_are_given_or_refused_on_kuzu(kuzu_repo):
    query = "MATCH (s:Symbol {name: $name}) RETURN s.qualname AS q"
    rows = json.loads(
        cg_command("cypher", query, "-p", "name=validate_coupon", "--json", "--repo", str(kuzu_repo)).stdout
    )
    assert rows == [{"q": "shop.billing.coupons.validate_coupon"}]
    _refused(cg_command("cypher", query, "-p", "nam=validate_coupon", "--repo", str(kuzu_repo), check=False), "$name")
    _refused(cg_command("cypher", query, "--write", "--repo", str(kuzu_repo), check=False), "$name")


def test_write_still_writes_on_kuzu(kuzu_repo):
    repo = kuzu_repo
    create = "CREATE (:External {id: 'stripe.Refund', name: 'Refund', resolved: true})"
    cg_command("cypher", create, "--write", "--repo", str(repo))
    count = "MATCH (e:External {id: 'stripe.Refund'}) RETURN count(e) AS n"
    assert json.loads(cg_command("cypher", count, "--json", "--repo", str(repo)).stdout) == [{"n": 1}]
    # two statements crash Kùzu 0.11 (heap corruption) even with --write: refused before it sees them
    _refused(cg_command("cypher", f"{create}; {create}", "--write", "--repo", str(repo), check=False), "one Cypher")
    cg_command("cypher", "MATCH (e:External {id: 'stripe.Refund'}) DELETE e", "--write", "--repo", str(repo))
    assert json.loads(cg_command("cypher", count, "--json", "--repo", str(repo)).stdout) == [{"n": 0}]


def test_search_for_nothing_is_one_line(kuzu_repo):
    for words in ("", "   ", "\t\n"):
        for command in (["search", words], ["search", "--docs", words], ["explain", words]):
            _refused(cg_command(*command, "--repo", str(kuzu_repo), check=False), "nothing to look for")


def _neo4j_graph(repo: Path):
    from cg.graph.neo4j_store import Neo4jStore

    with Neo4jStore(neo4j_settings(repo), read_only=True) as store:
        return dump(store)


@pytest.fixture(scope="module")
def neo4j_graph_before() -> dict:
    """The shop graph on the server as the first Neo4j test of this module found it (taken once)."""
    return {}


@pytest.mark.parametrize(("statement", "named"), HOSTILE_CASES)
class TestHostileOnNeo4j:
    pytestmark = needs_server

    def test_refused(self, neo4j_shop, neo4j_graph_before, tmp_path, statement, named):
        repo, _ = neo4j_shop
        if "graph" not in neo4j_graph_before:
            neo4j_graph_before["graph"] = _neo4j_graph(repo)
        graph = neo4j_graph_before["graph"]
        result = cg_command(
            "cypher", statement.replace("{out}", str(tmp_path)), "--repo", str(repo), check=False, env=NEO4J
        )
        _refused(result, named)
        assert list(tmp_path.iterdir()) == []
        assert _neo4j_graph(repo) == graph


@pytest.mark.parametrize("query", READING + READING_ON["neo4j"])
class TestReadingOnNeo4j:
    pytestmark = needs_server

    def test_runs(self, neo4j_shop, query):
        repo, _ = neo4j_shop
        rows = json.loads(cg_command("cypher", query, "--json", "--repo", str(repo), env=NEO4J).stdout)
        assert rows, query


class TestNeo4jServer:
    pytestmark = needs_server

    def test_parameters_and_write(self, neo4j_shop):
        repo, _ = neo4j_shop
        query = "MATCH (s:Symbol {repo: $repo, name: $name}) RETURN s.qualname AS q"
        rows = json.loads(
            cg_command("cypher", query, "-p", "name=validate_coupon", "--json", "--repo", str(repo), env=NEO4J).stdout
        )
        assert rows == [{"q": "shop.billing.coupons.validate_coupon"}]
        _refused(cg_command("cypher", query, "--repo", str(repo), check=False, env=NEO4J), "$name")
        create = "CREATE (:External {repo: $repo, id: 'stripe.Refund', name: 'Refund', resolved: true})"
        cg_command("cypher", create, "--write", "--repo", str(repo), env=NEO4J)
        count = "MATCH (e:External {repo: $repo, id: 'stripe.Refund'}) RETURN count(e) AS n"
        assert json.loads(cg_command("cypher", count, "--json", "--repo", str(repo), env=NEO4J).stdout) == [{"n": 1}]
        cg_command(
            "cypher",
            "MATCH (e:External {repo: $repo, id: 'stripe.Refund'}) DELETE e",
            "--write",
            "--repo",
            str(repo),
            env=NEO4J,
        )
        assert json.loads(cg_command("cypher", count, "--json", "--repo", str(repo), env=NEO4J).stdout) == [{"n": 0}]

    @pytest.mark.parametrize(
        ("url", "why"),
        [("file:///etc/passwd", "allow_csv_import_from_file_urls"), ("http://127.0.0.1:1/", "blocked")],
    )
    def test_the_server_itself_loads_no_file_and_no_url(self, neo4j_shop, url, why):
        """Even --write, past cg's own gate: the server's settings refuse (scripts/neo4j, docker/)."""
        repo, _ = neo4j_shop
        statement = f"LOAD CSV FROM '{url}' AS line RETURN line"
        result = cg_command("cypher", statement, "--write", "--repo", str(repo), check=False, env=NEO4J)
        assert result.returncode == 1 and why in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1

    def test_search_for_nothing_is_one_line(self, neo4j_shop):
        repo, _ = neo4j_shop
        _refused(cg_command("search", " ", "--repo", str(repo), check=False, env=NEO4J), "nothing to look for")


class TestNeo4jPlanner:
    pytestmark = needs_server

    def test_is_a_second_gate(self, monkeypatch, neo4j_shop):
        """A write the allow-list missed would still stop at Neo4j's planner: take the first gate away."""
        _planner_refuses_writes(monkeypatch, neo4j_shop[0])


def _planner_refuses_writes(monkeypatch, repo: Path) -> None:
    from cg.graph import neo4j_store
    from cg.graph.readonly import QueryRefused

    monkeypatch.setattr(neo4j_store, "vet", lambda query, params, write: query)
    with neo4j_store.Neo4jStore(neo4j_settings(repo), read_only=True) as store:
        with pytest.raises(QueryRefused, match="plans it as a write"):
            store.cypher("MATCH (s:Symbol {name: 'validate_coupon'}) SET s.docstring = 'always valid'")
        with pytest.raises(QueryRefused, match="plans it as a read and a write"):
            store.cypher("CREATE (e:External {id: 'stripe.Refund'}) RETURN e.id")
