"""File names are untrusted text: git is read NUL-separated, so a non-ASCII name, a space, a quote or
a newline in a path is read as it is (incremental `--since` sees the edit, the commit time is right),
and a revision that looks like an option is refused before git could read it as one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cg.ingest import git as cg_git
from tests.conftest import cg_command
from tests.shop_history import git

RETRY = "shop/payments/réessai.py"
SPACED = "shop/invoices/late fees.py"
QUOTED = 'shop/coupons/it\'s "free".py'
NEWLINE = "shop/webhooks/stripe\nevents.py"


def _module(name: str) -> str:
    return f'"""{name}."""\n\n\ndef {name}(amount_cents: int) -> int:\n    return amount_cents\n'


@pytest.fixture
def named_repo(tmp_path: Path) -> Path:
    """Four files with awkward names, committed at 1 750 000 000; then RETRY edited at 1 750 003 600."""
    repo = tmp_path / "shop"
    for path, name in ((RETRY, "schedule_retry"), (SPACED, "late_fee"), (QUOTED, "apply_coupon")):
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(_module(name))
    git(repo.parent, "init", "-q", str(repo))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Shop with awkward file names")
    (repo / RETRY).write_text(_module("schedule_retry") + "\n\ndef cap_backoff(seconds: int) -> int:\n    return 3\n")
    git(repo, "commit", "-qam", "Cap the retry backoff", when=1_750_003_600)
    return repo


def test_git_reads_awkward_names_as_they_are(named_repo: Path) -> None:
    (named_repo / NEWLINE).parent.mkdir(parents=True)
    (named_repo / NEWLINE).write_text(_module("handle_event"))
    git(named_repo, "add", "-A")
    git(named_repo, "commit", "-qm", "Stripe events", when=1_750_007_200)
    times = cg_git.last_commit_times(named_repo, {RETRY, SPACED, QUOTED, NEWLINE, "shop/absent.py"})
    assert times == {RETRY: 1_750_003_600, SPACED: 1_750_000_000, QUOTED: 1_750_000_000, NEWLINE: 1_750_007_200}
    assert cg_git.changed_since(named_repo, "HEAD~2") == {RETRY, NEWLINE}
    commits = cg_git.recent_commits(named_repo, 5)
    assert [sorted(c.hunks) for c in commits] == [[NEWLINE], [RETRY], sorted([RETRY, SPACED, QUOTED])]
    assert commits[1].hunks[RETRY] == [(6, 9)]
    blobs = cg_git.blobs_at(named_repo, [f"HEAD:{NEWLINE}", "HEAD:shop/absent.py", f"HEAD~1:{QUOTED}"])
    assert blobs == {
        f"HEAD:{NEWLINE}": _module("handle_event").encode(),
        "HEAD:shop/absent.py": None,
        f"HEAD~1:{QUOTED}": _module("apply_coupon").encode(),
    }


def test_unquote_path_reads_what_git_prints() -> None:
    assert cg_git.unquote_path('"b/shop/payments/r\\303\\251essai.py"') == "b/" + RETRY
    assert cg_git.unquote_path('"b/it\'s \\"free\\".py"\t') == 'b/it\'s "free".py'
    assert cg_git.unquote_path("b/shop/late fees.py\t") == "b/shop/late fees.py"
    assert cg_git.unquote_path('"b/stripe\\nevents\\\\x.py"') == "b/stripe\nevents\\x.py"


def test_since_sees_an_edit_to_a_non_ascii_file_and_commit_times_are_right(named_repo: Path) -> None:
    first = json.loads(cg_command("index", str(named_repo), "--json").stdout)
    assert first["files"] == 3 and not first["unreadable"]
    rows = _rows(named_repo, "MATCH (f:File) RETURN f.path AS path, f.committed_at AS ts ORDER BY path")
    assert {r["path"]: r["ts"] for r in rows} == {QUOTED: 1_750_000_000, SPACED: 1_750_000_000, RETRY: 1_750_003_600}

    (named_repo / RETRY).write_text(
        _module("schedule_retry") + "\n\ndef give_up(attempts: int) -> bool:\n    return True\n"
    )
    (named_repo / SPACED).write_text(_module("late_fee") + "\n\ndef waive_fee(invoice_id: str) -> None:\n    pass\n")
    since = json.loads(cg_command("index", str(named_repo), "--since", "HEAD", "--json").stdout)
    assert (since["mode"], since["changed"]) == ("incremental", 2)
    names = {r["name"] for r in _rows(named_repo, "MATCH (s:Symbol) RETURN s.name AS name")}
    assert {"give_up", "waive_fee", "apply_coupon"} <= names and "cap_backoff" not in names


def test_an_option_as_since_revision_is_refused_and_git_writes_nothing(named_repo: Path) -> None:
    cg_command("index", str(named_repo))
    planted = named_repo.parent / "planted.txt"
    for rev in (f"--output={planted}", "-p", ""):
        result = cg_command("index", str(named_repo), f"--since={rev}", check=False)
        assert result.returncode == 1, result.stderr
        assert "not a revision" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not planted.exists()
    with pytest.raises(cg_git.GitError):
        cg_git.changed_since(named_repo, f"--output={planted}")
    assert not planted.exists()


def _rows(repo: Path, query: str) -> list[dict]:
    return json.loads(cg_command("cypher", query, "--json", cwd=repo).stdout)
