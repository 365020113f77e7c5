"""Freshness through the real CLI: incremental `cg index`, `--since`, `--full`, `cg status`, docs
split into sections with MENTIONS, and commit history with TOUCHES, cited by `cg explain`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import cg_command, copy_shop
from tests.shop_history import commit_history, git


def index(repo: Path, *args: str) -> dict:
    return json.loads(cg_command("index", str(repo), "--json", *args).stdout)


@pytest.fixture(scope="module")
def shop_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/shop as a git repository with a short history; the last commit caps the backoff."""
    return commit_history(copy_shop(tmp_path_factory.mktemp("history") / "shop"))


@pytest.fixture(scope="module")
def indexed_history(shop_repo: Path) -> tuple[Path, dict]:
    return shop_repo, index(shop_repo)


def test_commits_become_nodes_touching_the_files_and_definitions_they_changed(indexed_history):
    repo, summary = indexed_history
    assert summary["mode"] == "full" and summary["commits"] == 2
    rows = json.loads(
        cg_command(
            "cypher",
            "MATCH (c:Commit)-[:TOUCHES]->(s:Symbol) WHERE c.subject = $s RETURN s.qualname AS q ORDER BY q",
            "--param",
            "s=Cap retry backoff at three days",
            "--json",
            cwd=repo,
        ).stdout
    )
    # the hunk changed one line of compute_backoff: that definition, and nothing else
    assert [r["q"] for r in rows] == ["shop.payments.retry.compute_backoff"]
    files = json.loads(
        cg_command(
            "cypher",
            "MATCH (c:Commit)-[:TOUCHES]->(f:File) RETURN c.subject AS s, count(f) AS n ORDER BY n",
            "--json",
            cwd=repo,
        ).stdout
    )
    assert files[0] == {"s": "Cap retry backoff at three days", "n": 1}
    assert files[1]["n"] > 20  # the import touched every file
    # every node carries the file's metadata; the retry module was last committed by the cap
    meta = json.loads(
        cg_command(
            "cypher",
            "MATCH (s:Symbol) WHERE s.qualname = 'shop.payments.retry.compute_backoff'"
            " RETURN s.language AS language, s.file_kind AS kind, s.committed_at AS at, s.blob_sha AS sha",
            "--json",
            cwd=repo,
        ).stdout
    )
    blob = git(repo, "hash-object", "shop/payments/retry.py").strip()
    assert meta == [{"language": "python", "kind": "source", "at": 1_760_000_000, "sha": blob}]


def test_docs_are_split_at_headings_and_mention_the_code(indexed_history):
    repo, _ = indexed_history
    rows = json.loads(
        cg_command(
            "cypher",
            "MATCH (d:Doc)-[:MENTIONS]->(s:Symbol) WHERE d.path = 'docs/payment-retries.md'"
            " RETURN d.heading AS h, s.qualname AS q ORDER BY h, q",
            "--json",
            cwd=repo,
        ).stdout
    )
    pairs = {(r["h"], r["q"]) for r in rows}
    assert (
        "Payment retries > Why exponential backoff with jitter",
        "shop.payments.retry.RetryPolicy.delay_for",
    ) in pairs
    assert (
        "Payment retries > Why retries are scheduled, not inline",
        "shop.payments.retry.schedule_payment_retry",
    ) in pairs
    # "A charge that fails" is prose, not the gateway's charge() method
    assert not any(q.endswith(".charge") for _, q in pairs)


def test_explain_cites_the_commit_and_the_design_note_that_answer_why(indexed_history):
    repo, _ = indexed_history
    out = cg_command("explain", "why is the retry backoff delay capped?", cwd=repo).stdout
    assert "## Docs and history" in out
    short = git(repo, "rev-parse", "--short=10", "HEAD").strip()
    assert f"[commit {short} 2025-10-09] Cap retry backoff at three days" in out
    assert "[docs/payment-retries.md:" in out
    data = json.loads(cg_command("explain", "why is the retry backoff delay capped?", "--json", cwd=repo).stdout)
    kinds = {(s["kind"], s["title"]) for s in data["sources"]}
    assert ("commit", "Cap retry backoff at three days") in kinds
    assert any(kind == "doc" and "backoff" in title for kind, title in kinds)


def test_status_then_incremental_index_then_since(indexed_history, tmp_path_factory):
    repo, _ = indexed_history
    status = json.loads(cg_command("status", "--json", cwd=repo).stdout)
    assert status["fresh"] and status["indexed_head"] == git(repo, "rev-parse", "HEAD").strip()

    again = index(repo)
    assert again["mode"] == "incremental" and again["changed"] == again["added"] == 0
    assert again["embedded"] == 0 and "jedi" not in again["seconds"]

    invoices = repo / "shop" / "billing" / "invoices.py"
    invoices.write_text(
        invoices.read_text() + "\n\ndef refund_window_days(plan):\n    return 30 if plan == 'annual' else 14\n"
    )
    (repo / "shop" / "notifications.py").unlink()
    status = json.loads(cg_command("status", "--json", cwd=repo).stdout)
    assert status["modified"] == ["shop/billing/invoices.py"] and status["deleted"] == ["shop/notifications.py"]
    assert not status["fresh"] and status["next_run"] == "incremental"
    text = cg_command("status", cwd=repo).stdout
    assert "stale: 1 modified: shop/billing/invoices.py" in text

    updated = index(repo)
    assert (updated["mode"], updated["changed"], updated["removed_files"]) == ("incremental", 1, 1)
    found = cg_command("search", "refund_window_days", "--json", cwd=repo).stdout
    assert json.loads(found)[0]["qualname"] == "shop.billing.invoices.refund_window_days"
    gone = cg_command("cypher", "MATCH (s:Symbol) WHERE s.path = 'shop/notifications.py' RETURN count(s)", cwd=repo)
    assert gone.stdout.splitlines()[1] == "0"

    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Add refund windows; drop the notifications module", when=1_770_000_000)
    status = json.loads(cg_command("status", "--json", cwd=repo).stdout)
    assert status["commits_since"] == 1 and not status["modified"]
    (repo / "shop" / "config.py").write_text((repo / "shop" / "config.py").read_text() + "\nREFUND_DAYS = 14\n")
    since = index(repo, "--since", "HEAD")
    assert (since["mode"], since["changed"], since["commits"], since["commits_new"]) == ("incremental", 1, 3, 1)

    full = index(repo, "--full")
    assert full["mode"] == "full" and full["symbols"] == since["symbols"] and full["edges"] == since["edges"]

    # a setting that shapes the index: status names it, and the next run is full
    (repo / "cg.toml").write_text("history_commits = 1\n")
    status = json.loads(cg_command("status", "--json", cwd=repo).stdout)
    assert status["next_run"] == "full (settings that shape the index changed: history_commits 200 -> 1)"
    (repo / "cg.toml").unlink()
    assert json.loads(cg_command("status", "--json", cwd=repo).stdout)["next_run"] == "incremental"

    bad = cg_command("index", str(repo), "--since", "no-such-rev", check=False)
    assert bad.returncode == 1 and bad.stderr.startswith("cg: ") and len(bad.stderr.strip().splitlines()) == 1
