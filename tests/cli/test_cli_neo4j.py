"""The same user journey on the Neo4j backend, against the real server scripts/test starts."""

from __future__ import annotations

import json
import os
import re

import pytest

from tests.cli.test_cli_flow import (
    QUESTION,
    check_backoff_impact,
    check_decorated_route,
    check_dispatch_agrees,
    check_flow,
    check_paths,
    explain_json,
    impact_json,
    parse_mermaid,
)
from tests.conftest import cg_command
from tests.neo4j_env import REQUIRED

NEO4J = {
    "CG_BACKEND": "neo4j",
    "NEO4J_URI": os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7697"),
    "NEO4J_USERNAME": os.environ.get("NEO4J_USERNAME", "neo4j"),
    "NEO4J_PASSWORD": os.environ.get("NEO4J_PASSWORD", "cgtestpass"),
}

needs_server = [pytest.mark.neo4j] + (
    [] if REQUIRED else [pytest.mark.skip(reason="Neo4j tests run under scripts/test (CG_TEST_NEO4J=1)")]
)


class TestOnNeo4j:
    pytestmark = needs_server

    def test_index_then_explain(self, neo4j_shop):
        repo, summary = neo4j_shop
        assert re.search(r"indexed 30 files, \d+ definitions \(\+\d+ chunks\), .* into neo4j", summary)
        text = cg_command("explain", "payment retry", "--repo", str(repo), env=NEO4J).stdout
        headings = re.findall(r"^## \d+\. (\S+)", text, re.M)
        assert "shop.payments.retry.schedule_payment_retry" in headings
        assert "Called by: " in text and "schedule_payment_retry (line 60, jedi)" in text

    def test_same_graph_as_the_embedded_store(self, neo4j_shop, indexed_shop):
        repo, _ = neo4j_shop
        kuzu_repo, _ = indexed_shop
        query = (
            "MATCH (a:Symbol {repo: $repo})-[c:CALLS]->(b)"
            " RETURN a.id AS src, b.id AS dst, c.line AS line ORDER BY src, dst"
        )
        on_neo4j = json.loads(cg_command("cypher", query, "--json", "--repo", str(repo), env=NEO4J).stdout)
        on_kuzu = json.loads(cg_command("cypher", query, "--json", "--repo", str(kuzu_repo)).stdout)
        assert on_neo4j == on_kuzu and len(on_neo4j) > 300

    def test_explain_gives_the_same_flow_as_the_embedded_store(self, neo4j_shop, indexed_shop):
        def flow(repo, env=None):
            data = explain_json(repo, env)
            return data, (data["seeds"], data["entries"], data["order"], data["edges"])

        on_neo4j, shape = flow(neo4j_shop[0], NEO4J)
        check_flow(on_neo4j)
        assert shape == flow(indexed_shop[0])[1]

    def test_impact_and_path_as_on_the_embedded_store(self, neo4j_shop, indexed_shop):
        repo = neo4j_shop[0]
        on_neo4j = impact_json(repo, "compute_backoff", env=NEO4J)
        check_backoff_impact(on_neo4j)
        assert on_neo4j == impact_json(indexed_shop[0], "compute_backoff")
        check_paths(repo, NEO4J)
        check_dispatch_agrees(repo, NEO4J)
        mermaid = cg_command("explain", QUESTION, "--format", "mermaid", "--repo", str(repo), env=NEO4J).stdout
        parse_mermaid(mermaid)

    def test_explain_shows_the_decorator_that_wraps_a_route(self, neo4j_shop):
        check_decorated_route(neo4j_shop[0], NEO4J)

    def test_cypher_read_only_unless_write(self, neo4j_shop):
        repo, _ = neo4j_shop
        refused = cg_command("cypher", "CREATE (:External {id: 'x'})", "--repo", str(repo), check=False, env=NEO4J)
        assert refused.returncode != 0
        assert len(refused.stderr.strip().splitlines()) == 1 and "refuses CREATE" in refused.stderr

    def test_wrong_password_is_one_line(self, tmp_path):
        env = {**NEO4J, "NEO4J_PASSWORD": "not-the-password"}
        result = cg_command("search", "retry", "--repo", str(tmp_path), check=False, env=env)
        assert result.returncode != 0
        lines = result.stderr.strip().splitlines()
        assert lines == [f"cg: Neo4j at {NEO4J['NEO4J_URI']} refused the credentials (NEO4J_USERNAME/NEO4J_PASSWORD)"]


def test_server_down_is_one_line(tmp_path):
    env = {**NEO4J, "NEO4J_URI": "bolt://127.0.0.1:9"}
    result = cg_command("search", "retry", "--repo", str(tmp_path), check=False, env=env)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cg: cannot reach Neo4j at bolt://127.0.0.1:9")
