from __future__ import annotations

import json

import pytest

from tests.conftest import cg_command

_SUMMARY: dict[str, str] = {}
_SENTINEL = "MATCH (s:Symbol {repo: $repo, id: 'shop/payments/retry.py::schedule_payment_retry'}) RETURN count(s) AS n"


@pytest.fixture
def neo4j_shop(shop_copy):
    """The shop copy indexed into the shared Neo4j server (as repository ``shop``, its directory's name);
    rebuilt whenever it is no longer there."""
    from tests.cli.test_cli_neo4j import NEO4J

    asked = cg_command("cypher", _SENTINEL, "--json", "--repo", str(shop_copy), env=NEO4J, check=False)
    present = asked.returncode == 0 and json.loads(asked.stdout)[0]["n"]  # an empty server: "no complete index"
    if not present or "summary" not in _SUMMARY:
        _SUMMARY["summary"] = cg_command("index", str(shop_copy), "--rebuild", env=NEO4J).stdout
    return shop_copy, _SUMMARY["summary"]
