"""Every query in docs/cypher.md runs, through `cg cypher`, on the indexed examples/shop: on Kùzu,
and on Neo4j when the server is part of the run; the portable ones give the same rows on both."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.cli.test_cli_neo4j import NEO4J, needs_server
from tests.conftest import cg_command

DOC = Path(__file__).resolve().parents[2] / "docs" / "cypher.md"
BLOCKS = re.findall(r"```cypher( kuzu| neo4j)?\n(.*?)```", DOC.read_text(), re.S)
# every query must answer something on the example service, except these (the shop has no import cycle)
MAY_BE_EMPTY = ("(b:File)-[:IMPORTS]->(a)",)


def _cases(backend: str):
    for number, (tag, query) in enumerate(BLOCKS, start=1):
        if tag.strip() in ("", backend):
            yield pytest.param(query, id=f"q{number}")


def test_the_docs_have_enough_queries():
    assert len([b for b in BLOCKS if b[0] == ""]) >= 10


@pytest.mark.parametrize("query", list(_cases("kuzu")))
def test_doc_query_on_kuzu(indexed_shop, query):
    repo, _ = indexed_shop
    rows = json.loads(cg_command("cypher", query, "--json", "--repo", str(repo)).stdout)
    if not any(marker in query for marker in MAY_BE_EMPTY):
        assert rows, query


@pytest.mark.parametrize("query", list(_cases("neo4j")))
class TestDocsOnNeo4j:
    pytestmark = needs_server

    def test_doc_query(self, neo4j_shop, indexed_shop, query):
        repo, _ = neo4j_shop
        rows = json.loads(cg_command("cypher", query, "--json", "--repo", str(repo), env=NEO4J).stdout)
        if not any(marker in query for marker in MAY_BE_EMPTY):
            assert rows, query
        if "kuzu" not in query and "[n IN" not in query:  # portable: the same answer as the embedded store
            kuzu_repo, _ = indexed_shop
            on_kuzu = json.loads(cg_command("cypher", query, "--json", "--repo", str(kuzu_repo)).stdout)
            assert _norm(rows) == _norm(on_kuzu)


def _norm(rows):
    return sorted(json.dumps(r, sort_keys=True) for r in rows)
