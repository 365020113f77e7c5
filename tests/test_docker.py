"""docker/ is for users (no Docker engine runs here): check the compose file's shape always, and let a
compose client validate it where one is installed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

COMPOSE = Path(__file__).resolve().parent.parent / "docker" / "docker-compose.yml"


def test_compose_runs_neo4j_526_community_with_healthcheck_and_volume():
    spec = yaml.safe_load(COMPOSE.read_text())
    neo4j = spec["services"]["neo4j"]
    assert neo4j["image"] == "neo4j:5.26-community"
    assert "cypher-shell" in " ".join(neo4j["healthcheck"]["test"])
    assert any(v.endswith(":/data") for v in neo4j["volumes"])
    assert all(p.startswith("127.0.0.1:") for p in neo4j["ports"])
    # Cypher reaches no file and no address (the same settings as scripts/neo4j's test server)
    assert neo4j["environment"]["NEO4J_dbms_security_allow__csv__import__from__file__urls"] == "false"
    assert set(neo4j["environment"]["NEO4J_internal_dbms_cypher__ip__blocklist"].split(",")) == {"0.0.0.0/0", "::/0"}
    cg = spec["services"]["cg"]
    assert cg["environment"]["NEO4J_URI"] == "bolt://neo4j:7687"
    assert cg["depends_on"]["neo4j"]["condition"] == "service_healthy"


def _client() -> list[str] | None:
    if shutil.which("docker") and subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


@pytest.mark.skipif(_client() is None, reason="no docker compose client on this machine")
def test_compose_config_validates():
    result = subprocess.run([*_client(), "-f", str(COMPOSE), "config"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "neo4j:5.26-community" in result.stdout
