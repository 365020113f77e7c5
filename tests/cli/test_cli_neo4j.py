"""The same user journey on the Neo4j backend, against the real server scripts/test starts."""

from __future__ import annotations

import json
import os
import re

import pytest

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
        assert re.search(r"indexed 28 files, \d+ definitions \(\+\d+ chunks\), .* into neo4j", summary)
        text = cg_command("explain", "payment retry", "--repo", str(repo), env=NEO4J).stdout
        headings = re.findall(r"^## \d+\. (\S+)", text, re.M)
        assert "shop.payments.retry.schedule_payment_retry" in headings[:2]
        assert "[shop/webhooks/stripe_webhooks.py:47-66] calls schedule_payment_retry at line 60" in text

    def test_same_graph_as_the_embedded_store(self, neo4j_shop, indexed_shop):
        repo, _ = neo4j_shop
        kuzu_repo, _ = indexed_shop
        query = "MATCH (a:Symbol)-[c:CALLS]->(b) RETURN a.id AS src, b.id AS dst, c.line AS line ORDER BY src, dst"
        on_neo4j = json.loads(cg_command("cypher", query, "--json", "--repo", str(repo), env=NEO4J).stdout)
        on_kuzu = json.loads(cg_command("cypher", query, "--json", "--repo", str(kuzu_repo)).stdout)
        assert on_neo4j == on_kuzu and len(on_neo4j) > 300

    def test_explain_gives_the_same_seeds_and_flow_as_the_embedded_store(self, neo4j_shop, indexed_shop):
        def flow(repo, env=None):
            data = json.loads(cg_command("explain", "payment retry", "--json", "--repo", str(repo), env=env).stdout)
            return [
                (
                    f["seed"]["qualname"],
                    sorted((c["qualname"], c["depth"], c["call_line"]) for c in f["callers"]),
                    sorted((c["qualname"], c["depth"], c["call_line"]) for c in f["callees"]),
                )
                for f in data["flows"]
            ]

        on_neo4j = flow(neo4j_shop[0], NEO4J)
        assert on_neo4j == flow(indexed_shop[0])
        assert on_neo4j[0][0] == "shop.payments.retry.schedule_payment_retry" and on_neo4j[0][1] and on_neo4j[0][2]

    def test_cypher_read_only_unless_write(self, neo4j_shop):
        repo, _ = neo4j_shop
        refused = cg_command("cypher", "CREATE (:External {id: 'x'})", "--repo", str(repo), check=False, env=NEO4J)
        assert refused.returncode != 0
        assert len(refused.stderr.strip().splitlines()) == 1 and "read access mode" in refused.stderr

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
