"""Whether and how the tests reach the Neo4j server that scripts/test starts.

CG_TEST_NEO4J=1 (set by scripts/test) or CI=true means Neo4j tests are part of the run: a server that
cannot be reached makes them fail, never skip. Without either, running plain `pytest` by hand, the
Neo4j variants are deselected with a visible reason.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cg.config import load_settings

REQUIRED = os.environ.get("CG_TEST_NEO4J") == "1" or os.environ.get("CI", "").lower() == "true"
# For tests parametrized over both stores: the Neo4j variant is deselected, visibly, only outside CI
# and scripts/test.
BACKENDS = [
    "kuzu",
    pytest.param(
        "neo4j",
        marks=[pytest.mark.neo4j]
        + ([] if REQUIRED else [pytest.mark.skip(reason="Neo4j tests run under scripts/test (CG_TEST_NEO4J=1)")]),
    ),
]


def neo4j_settings(repo: Path):
    return load_settings(
        repo,
        backend="neo4j",
        neo4j_uri=os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7697"),
        neo4j_username=os.environ.get("NEO4J_USERNAME", "neo4j"),
        neo4j_password=os.environ.get("NEO4J_PASSWORD", "cgtestpass"),
    )
