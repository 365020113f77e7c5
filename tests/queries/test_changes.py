"""`cg changes`: the definitions a diff touches (working tree or REV..HEAD), and the callers, flows and
tests they reach, on examples/shop as a two-commit git repository (tests/shop_history.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from cg.api import open_index
from cg.config import load_settings
from cg.ingest.changes import diff_definitions
from tests.conftest import cg_command, copy_shop
from tests.shop_history import commit_history, git

RETRY = "shop/payments/retry.py"
BACKOFF = f"{RETRY}::compute_backoff"
CAPPED = "    return min(base * multiplier ** (attempt - 1), MAX_DELAY_SECONDS)"
SPLIT = "    delay = base * multiplier ** (attempt - 1)\n    return min(delay, MAX_DELAY_SECONDS)"
NAME = {"CG_RESOLVER": "name"}  # jedi's answers vary with the machine's load; the name resolver's do not


@pytest.fixture(scope="module")
def shop_git(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = commit_history(copy_shop(tmp_path_factory.mktemp("changes") / "shop"))
    cg_command("index", str(repo), env=NAME)
    return repo


@pytest.fixture
def repo(shop_git: Path) -> Iterator[Path]:
    """The indexed repository; whatever a test changes in the working tree is undone after it."""
    yield shop_git
    git(shop_git, "checkout", "-q", "--", ".")
    git(shop_git, "clean", "-fdq")


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} is no longer in {path}"
    path.write_text(text.replace(old, new, 1))


def test_body_edit_gives_the_definition_its_callers_and_tests(repo: Path) -> None:
    _edit(repo / RETRY, CAPPED, SPLIT)
    with open_index(repo) as index:
        result = index.changes()
    assert [(c.node["id"], c.status) for c in result.changed] == [(BACKOFF, "modified")]
    assert result.changed[0].lines == 2  # the two lines that replace the old one
    callers = {r.affected.node["qualname"]: r.affected.depth for r in result.callers}
    assert callers["shop.payments.retry.RetryPolicy.delay_for"] == 1
    assert callers["shop.payments.retry.schedule_payment_retry"] == 2
    assert [r.affected.depth for r in result.callers] == sorted(r.affected.depth for r in result.callers)
    tests = [r.affected.node["name"] for r in result.tests]
    assert tests[0] == "test_compute_backoff_grows_exponentially"  # the direct one first
    assert "test_failed_charge_is_retried_by_worker" in tests  # through the worker, four hops up
    assert any(f.node["qualname"].endswith("WebhookHandler.handle_invoice_payment_failed") for f in result.flows)
    assert result.stale == [RETRY]  # the edit is newer than the index, and the answer says so


def test_cli_text_cites_and_json_matches_the_api(repo: Path) -> None:
    _edit(repo / RETRY, CAPPED, SPLIT)
    text = cg_command("changes", "--repo", str(repo)).stdout
    assert text.startswith("# Changes: working tree against HEAD (1 file, 1 definition)")
    assert f"modified shop.payments.retry.compute_backoff (function) [{RETRY}:29-35]" in text
    assert "shop.payments.retry.RetryPolicy.delay_for [shop/payments/retry.py:53-59] calls compute_backoff" in text
    data = json.loads(cg_command("changes", "--repo", str(repo), "--json").stdout)
    with open_index(repo) as index:
        assert data == json.loads(json.dumps(index.changes().as_dict(), default=str))


def test_rev_to_head_covers_the_commits_in_between(repo: Path) -> None:
    with open_index(repo) as index:
        result = index.changes("HEAD~1")
    assert result.base == "HEAD~1" and result.target == "HEAD"
    assert result.files == {RETRY: "modified"}
    assert [c.node["id"] for c in result.changed] == [BACKOFF]
    assert result.tests and not result.stale  # HEAD is what the index holds


def test_new_file_and_removed_function(repo: Path) -> None:
    (repo / "shop" / "payments" / "refunds.py").write_text(
        "from .retry import compute_backoff\n\n\ndef refund_delay(attempt: int) -> float:\n"
        "    return compute_backoff(attempt, 60.0, 2.0)\n"
    )
    text = (repo / RETRY).read_text()
    start = text.index("def is_retryable(")
    end = text.index("\ndef ", start + 1)
    (repo / RETRY).write_text(text[:start] + text[end + 1 :])
    with open_index(repo) as index:
        result = index.changes()
    by_id = {c.node["id"]: c for c in result.changed}
    assert result.files["shop/payments/refunds.py"] == "added"
    added = by_id["shop/payments/refunds.py::refund_delay"]
    assert added.status == "added" and not added.indexed  # new since the index: its callers are not known
    removed = by_id[f"{RETRY}::is_retryable"]
    assert removed.status == "removed" and removed.indexed
    callers = {r.affected.node["qualname"] for r in result.callers}
    assert "shop.payments.service.PaymentService.charge_invoice" in callers  # it calls the removed function


def test_definitions_come_from_the_diff_not_the_stale_index(repo: Path) -> None:
    """Lines added above a definition move it down; the index still has the old lines, the answer the new."""
    (repo / RETRY).write_text("# Payments: retries.\n" + (repo / RETRY).read_text())
    _edit(repo / RETRY, CAPPED, SPLIT)
    diff = diff_definitions(load_settings(repo))
    assert {d.id: d.start_line for d in diff.definitions} == {BACKOFF: 30, f"{RETRY}::<module>": 1}  # 29 indexed


def test_no_changes(repo: Path) -> None:
    with open_index(repo) as index:
        result = index.changes()
    assert not result.files and not result.changed and not result.callers
    assert "No changes." in cg_command("changes", "--repo", str(repo)).stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no-such-revision"], "no-such-revision"),
        (["--output=/tmp/x"], "not a revision"),
    ],
)
def test_bad_revision_is_one_line(repo: Path, args: list[str], message: str) -> None:
    done = cg_command("changes", "--repo", str(repo), "--", *args, check=False)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cg: ") and message in lines[0], done.stderr


def test_outside_git_is_one_line(tmp_path: Path) -> None:
    repo = copy_shop(tmp_path / "shop")
    cg_command("index", str(repo), env=NAME)
    done = cg_command("changes", "--repo", str(repo), check=False)
    assert done.returncode != 0
    assert done.stderr.strip().count("\n") == 0 and "not in a git repository" in done.stderr, done.stderr
