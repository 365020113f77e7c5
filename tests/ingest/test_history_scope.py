"""History is read for the indexed folder, not for the whole git repository around it: indexing
examples/shop from inside a bigger repository (as from the cg clone) reads only the commits that touch
the folder (``git log -- <folder>``), with their paths relative to it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cg.ingest import git as cg_git
from tests.conftest import cg_command, copy_shop
from tests.shop_history import CAP_MESSAGE, commit_nested_history


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[str]]:
    outer = tmp_path_factory.mktemp("platform") / "platform"
    shop = copy_shop(outer / "examples" / "shop")
    return outer, shop, commit_nested_history(outer, shop)


def test_commits_are_those_touching_the_folder_with_paths_relative_to_it(platform) -> None:
    outer, shop, subjects = platform
    commits = cg_git.recent_commits(shop, 10)
    assert [c.subject for c in commits] == [subjects[0], subjects[1], subjects[3]]
    mixed, cap, imported = commits
    assert sorted(mixed.hunks) == ["README.md"]  # the changelog beside the folder is not in it
    assert sorted(cap.hunks) == ["shop/payments/retry.py"]
    assert "shop/payments/retry.py" in imported.hunks and not any(p.startswith("examples/") for p in imported.hunks)
    # the whole repository still reads all five, from its top
    assert len(cg_git.recent_commits(outer, 10)) == 5
    # the window is counted in the folder's commits: the newest two of them, not of the repository
    assert [c.subject for c in cg_git.recent_commits(shop, 2)] == subjects[:2]


def test_index_of_a_subfolder_stores_only_its_history(platform) -> None:
    _, shop, subjects = platform
    summary = json.loads(cg_command("index", str(shop), "--json").stdout)
    assert summary["commits"] == 3
    rows = json.loads(
        cg_command(
            "cypher",
            "MATCH (c:Commit) OPTIONAL MATCH (c)-[:TOUCHES]->(s:Symbol)"
            " WITH c.subject AS subject, c.committed_at AS at, collect(s.qualname) AS touched"
            " RETURN subject, touched ORDER BY at DESC",
            "--json",
            cwd=shop,
        ).stdout
    )
    assert [r["subject"] for r in rows] == [subjects[0], subjects[1], subjects[3]]
    assert rows[1]["touched"] == ["shop.payments.retry.compute_backoff"]
    files = json.loads(
        cg_command(
            "cypher",
            "MATCH (c:Commit)-[:TOUCHES]->(f:File) WHERE c.message = $m RETURN f.path AS path",
            "--param",
            f"m={CAP_MESSAGE}",
            "--json",
            cwd=shop,
        ).stdout
    )
    assert files == [{"path": "shop/payments/retry.py"}]
