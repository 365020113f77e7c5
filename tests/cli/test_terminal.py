"""What a terminal shows: long answers through a pager (as git's: $CG_PAGER, $PAGER, less), never when
piped or with --json or --no-pager; help text printed as written (rich markup never swallows
``[...]``); summary counts that agree with their nouns."""

from __future__ import annotations

import os
import pty
import shlex
import subprocess
import sys
from pathlib import Path

import typer
from rich.text import Text

from cg.cli import app
from tests.conftest import cg_command


def _help_strings() -> list[str]:
    group = typer.main.get_command(app)
    texts = [group.help or ""]
    for command in getattr(group, "commands", {}).values():
        texts.append(command.help or "")
        texts.extend(getattr(p, "help", None) or "" for p in command.params)
    return [t for t in texts if t]


def test_every_help_string_prints_as_written():
    texts = _help_strings()
    assert any("[callees]" in t for t in texts)
    for text in texts:
        # rich markup: "\[" is a literal "[", and a "[word]" that is not escaped is read as a style
        assert Text.from_markup(text).plain == text.replace("\\[", "["), text


def test_help_shows_the_callgraph_shape():
    listing = cg_command("--help", env={"COLUMNS": "200"}).stdout
    assert "{caller: [callees]}" in listing
    assert "{caller: [callees]}" in cg_command("callgraph", "--help", env={"COLUMNS": "200"}).stdout


def test_the_summary_counts_agree_with_their_nouns():
    from cg.cli import _status_text, _summary_text
    from cg.ingest.pipeline import IndexSummary
    from cg.ingest.status import Status

    one = IndexSummary(
        repo="shop",
        backend="kuzu",
        files=1,
        symbols=1,
        chunks=1,
        doc_sections=1,
        commits=1,
        commits_new=1,
        edges={"CALLS": 1},
    )
    one.resolver, one.jedi_sites, one.jedi_answered, one.jedi_workers = "jedi", 1, 1, 1
    text = _summary_text(one)
    assert "indexed 1 file, 1 definition (+1 chunk), 1 CALLS into kuzu" in text
    assert "docs: 1 section; history: 1 commit (1 new)" in text
    assert "jedi: answered 1 of 1 site with 1 worker" in text
    many = IndexSummary("shop", "kuzu", mode="incremental", files=29, symbols=219, chunks=128, changed=1, affected=1)
    many.doc_sections, many.commits = 8, 2
    text = _summary_text(many)
    assert "1 unchanged file re-resolved" in text and "index: 29 files, 219 definitions (+128 chunks)" in text
    assert "docs: 8 sections; history: 2 commits (0 new)" in text
    status = Status("shop", "kuzu", "2026-12-01", "a" * 40, "b" * 40, 1, {"File": 1, "Commit": 1, "CALLS": 2})
    assert "1 commit behind HEAD bbbbbbbbbb" in _status_text(status)
    assert "1 file, 0 definitions, 0 doc sections, 1 commit, 2 calls" in _status_text(status)


def _on_a_terminal(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    """Run the real CLI with stdin and stdout on a pseudo-terminal (as in a shell); what it showed there."""
    cg = Path(sys.executable).parent / "cg"
    command = [str(cg)] if cg.exists() else [sys.executable, "-m", "cg.cli"]
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [*command, *args],
        cwd=cwd,
        stdin=follower,
        stdout=follower,
        stderr=subprocess.PIPE,
        env={**os.environ, "COLUMNS": "120", "TERM": "xterm", **env},
    )
    os.close(follower)
    shown = b""
    while True:
        try:
            block = os.read(leader, 1 << 16)
        except OSError:  # the terminal closed: every process on it has exited
            break
        if not block:
            break
        shown += block
    os.close(leader)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()
    return shown.decode("utf-8", "replace")


def _pager(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A pager that keeps what it is given in a file (and shows nothing)."""
    received = tmp_path / "paged.txt"
    script = f"import sys; open({str(received)!r}, 'w').write(sys.stdin.read())"
    return {"CG_PAGER": f"{sys.executable} -c {shlex.quote(script)}", "PAGER": "false"}, received


def test_a_long_answer_on_a_terminal_goes_through_the_pager(indexed_shop, tmp_path: Path):
    repo, _ = indexed_shop
    env, received = _pager(tmp_path)
    shown = _on_a_terminal(["callers", "RetryPolicy.delay_for", "--depth", "2"], repo, env)
    paged = received.read_text()
    assert "shop.payments.retry.schedule_payment_retry [shop/payments/retry.py:86-117]" in paged
    assert "schedule_payment_retry" not in shown  # the pager had it, the terminal did not
    # explain renders its Markdown with rich, into the pager
    _on_a_terminal(["explain", "how is a failed payment retried?", "--budget", "800"], repo, env)
    assert "How it works" in received.read_text()


def test_no_pager_when_piped_with_json_or_with_no_pager(indexed_shop, tmp_path: Path):
    repo, _ = indexed_shop
    env, received = _pager(tmp_path)
    piped = cg_command("callers", "RetryPolicy.delay_for", cwd=repo, env=env).stdout
    assert "schedule_payment_retry" in piped and not received.exists()
    shown = _on_a_terminal(["callers", "RetryPolicy.delay_for", "--json"], repo, env)
    assert '"qualname": "shop.payments.retry.schedule_payment_retry"' in shown and not received.exists()
    shown = _on_a_terminal(["--no-pager", "callers", "RetryPolicy.delay_for"], repo, env)
    assert "schedule_payment_retry" in shown and not received.exists()
    shown = _on_a_terminal(["callers", "RetryPolicy.delay_for"], repo, {"CG_PAGER": "cat"})
    assert "schedule_payment_retry" in shown
