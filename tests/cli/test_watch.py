"""`cg watch`: the index follows edits, renames and deletions while it runs, and equals what a fresh
run gives after each change settles; one pass at a time; the index's own writes and ignored paths
never start a pass; it stops at once on SIGTERM.

The end-to-end test runs the real command in a subprocess on a git copy of examples/shop and polls
(with a deadline, never a fixed sleep) until the index holds the tree; then the graph must equal a
full rebuild of a copy of the same tree (tests/graphdump.py), which tests/ingest/test_incremental.py
shows an incremental run equals. The name resolver keeps both sides deterministic (see there)."""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from cg.api import open_index
from cg.config import load_settings
from cg.embed import embedder_for
from cg.graph.kuzu_store import KuzuStore
from cg.ingest.pipeline import index_repository
from cg.ingest.watch import Pass, WatchFilter, watch_loop
from tests.conftest import copy_shop
from tests.graphdump import differences, dump
from tests.shop_history import commit_history

NAME = {"CG_RESOLVER": "name"}
DEADLINE = 120.0  # seconds a pass may take to show up on this shared, loaded machine


class Watcher:
    """`cg watch --json` in a subprocess: its passes (JSON lines on stdout) read by a thread."""

    def __init__(self, repo: Path) -> None:
        cg = Path(sys.executable).parent / "cg"
        command = [str(cg)] if cg.exists() else [sys.executable, "-m", "cg.cli"]
        self.proc = subprocess.Popen(
            [*command, "watch", "--repo", str(repo), "--debounce", "200", "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **NAME},
        )
        self.passes: queue.Queue[dict] = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(target=self._read, args=(self.proc.stdout, self._pass), daemon=True).start()
        threading.Thread(target=self._read, args=(self.proc.stderr, self.stderr.append), daemon=True).start()

    def _pass(self, line: str) -> None:
        self.passes.put(json.loads(line))

    @staticmethod
    def _read(stream, sink: Callable[[str], None]) -> None:
        for line in stream:
            sink(line)

    def next_pass(self) -> dict:
        try:
            return self.passes.get(timeout=DEADLINE)
        except queue.Empty:
            raise AssertionError(f"no pass within {DEADLINE:.0f} s; stderr: {''.join(self.stderr)}") from None

    def stop(self) -> float:
        """SIGTERM; the seconds until the process is gone."""
        started = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=30)
        return time.monotonic() - started


@pytest.fixture
def watched(tmp_path: Path) -> Iterator[tuple[Path, Watcher]]:
    repo = commit_history(copy_shop(tmp_path / "shop"))
    watcher = Watcher(repo)
    try:
        yield repo, watcher
    finally:
        if watcher.proc.poll() is None:
            watcher.proc.kill()
            watcher.proc.wait()


def _settled(repo: Path, watcher: Watcher, expect: set[str]) -> list[dict]:
    """The passes until the index holds the tree as it is on disk and every path of ``expect`` was named
    by a pass (``cg status`` reads the tree the way a pass does)."""
    seen: list[dict] = []
    named: set[str] = set()
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        seen.append(watcher.next_pass())
        assert not seen[-1]["error"], seen[-1]
        named.update(seen[-1]["paths"])
        if expect <= named:
            with open_index(repo) as index:
                status = index.status()
            if not (status.modified or status.added or status.deleted):
                return seen
    raise AssertionError(f"the index did not settle: passes {seen}")


def _full_rebuild(repo: Path, embedder) -> dict:
    with tempfile.TemporaryDirectory() as scratch:
        ref = Path(scratch) / repo.name
        shutil.copytree(repo, ref, ignore=shutil.ignore_patterns(".cg", "__pycache__"))
        store = KuzuStore(ref / ".cg" / "graph.kuzu")
        try:
            index_repository(load_settings(ref, resolver="name"), store, embedder, full=True)
            return dump(store)
        finally:
            store.close()


def _assert_fresh(repo: Path, embedder) -> None:
    with open_index(repo) as index:
        watched = dump(index.store)
    diff = differences(watched, _full_rebuild(repo, embedder))
    assert not diff, "\n".join(diff)


def test_index_follows_edits_renames_and_deletions(watched: tuple[Path, Watcher]) -> None:
    repo, watcher = watched
    embedder = embedder_for(load_settings(repo))
    first = watcher.next_pass()
    assert first["mode"] == "full" and not first["paths"]  # no index yet: the first pass builds it
    _assert_fresh(repo, embedder)

    retry = repo / "shop" / "payments" / "retry.py"
    retry.write_text(retry.read_text().replace("    return min(base", "    base = max(base, 1.0)\n    return min(base"))
    _settled(repo, watcher, {"shop/payments/retry.py"})
    _assert_fresh(repo, embedder)

    (repo / "shop" / "notifications.py").rename(repo / "shop" / "notices.py")
    _settled(repo, watcher, {"shop/notifications.py", "shop/notices.py"})
    _assert_fresh(repo, embedder)

    (repo / "shop" / "queue.py").unlink()
    (repo / ".venv").mkdir()  # ignored by the walk: never a reason for a pass, nor in any pass's paths
    (repo / ".venv" / "site.py").write_text("def vendored():\n    return 1\n")
    _settled(repo, watcher, {"shop/queue.py"})
    _assert_fresh(repo, embedder)

    # a burst of saves, one of them a file that vanishes again at once: the passes end in the same graph
    for n in range(5):
        (repo / "shop" / f"draft_{n}.py").write_text(f"def draft_{n}():\n    return {n}\n")
    (repo / "shop" / "draft_0.py").unlink()
    passes = _settled(repo, watcher, {f"shop/draft_{n}.py" for n in range(1, 5)})
    _assert_fresh(repo, embedder)
    assert not any(p.startswith((".venv", ".cg")) for done in passes for p in done["paths"])

    assert watcher.stop() < 5.0
    assert watcher.proc.returncode == 0
    assert "cg watch: stopped" in "".join(watcher.stderr)


def test_changes_during_a_pass_give_exactly_one_follow_up(tmp_path: Path) -> None:
    """A pass that is still running when more files change: they wait, and one pass takes them all."""
    repo = tmp_path / "ledger"
    (repo / "ledger").mkdir(parents=True)
    (repo / "ledger" / "accounts.py").write_text("def balance():\n    return 0\n")
    calls: list[float] = []
    inside = threading.Event()
    release = threading.Event()
    ready = threading.Event()
    stop = threading.Event()
    passes: list[Pass] = []

    def index_once() -> SimpleNamespace:
        calls.append(time.monotonic())
        if len(calls) == 2:  # the first pass after the initial one: hold it while files change
            inside.set()
            assert release.wait(DEADLINE)
        return SimpleNamespace(mode="incremental", changed=1, added=0, removed_files=0, affected=0)

    thread = threading.Thread(
        target=watch_loop,
        args=(repo, repo / ".cg", index_once, stop, passes.append, 100),
        kwargs={"on_ready": ready.set},
    )
    thread.start()
    try:
        assert ready.wait(DEADLINE)
        (repo / "ledger" / "accounts.py").write_text("def balance():\n    return 1\n")
        assert inside.wait(DEADLINE)
        for name in ("invoices", "refunds", "payouts"):
            (repo / "ledger" / f"{name}.py").write_text(f"def {name}():\n    return []\n")
        (repo / ".cg").mkdir()
        (repo / ".cg" / "state.msgpack").write_bytes(b"\x80")  # the index's own write: no pass
        release.set()
        deadline = time.monotonic() + DEADLINE
        while len(passes) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert [p.paths for p in passes] == [
            [],
            ["ledger/accounts.py"],
            ["ledger/invoices.py", "ledger/payouts.py", "ledger/refunds.py"],
        ]
        quiet_until = time.monotonic() + 1.0  # no further pass: nothing changed since
        while time.monotonic() < quiet_until:
            assert len(calls) == 3
            time.sleep(0.05)
    finally:
        release.set()
        stop.set()
        thread.join(timeout=5)
    assert not thread.is_alive()  # the stop event ends an idle watcher at once


def test_a_failed_pass_is_reported_and_tried_again(tmp_path: Path) -> None:
    from cg.graph.store import WriterBusy

    repo = tmp_path / "ledger"
    repo.mkdir()
    outcomes = [WriterBusy("the index of ledger is being written by another run"), None]
    passes: list[Pass] = []
    stop = threading.Event()

    def index_once() -> SimpleNamespace:
        outcome = outcomes.pop(0) if outcomes else None
        if outcome is not None:
            raise outcome
        return SimpleNamespace(mode="incremental", changed=0, added=0, removed_files=0, affected=0)

    def on_pass(done: Pass) -> None:
        passes.append(done)
        if done.ok:
            stop.set()

    thread = threading.Thread(target=watch_loop, args=(repo, repo / ".cg", index_once, stop, on_pass, 50))
    thread.start()
    thread.join(timeout=DEADLINE)
    assert not thread.is_alive()
    assert [p.ok for p in passes] == [False, True]
    assert passes[0].line().startswith("pass failed after") and "another run" in passes[0].line()
    assert passes[1].line().startswith("nothing to update")


def test_filter_follows_the_walk_rules(tmp_path: Path) -> None:
    repo = tmp_path / "shop"
    (repo / "shop").mkdir(parents=True)
    (repo / ".gitignore").write_text("generated/\n*.log\n")
    keep = WatchFilter(repo, repo / ".cg")
    relevant = {
        rel: keep.relevant(str(repo / rel))
        for rel in (
            "shop/app.py",
            ".cg/kuzu/CURRENT",
            ".git/objects/ab/cdef",
            ".git/index",
            ".git/HEAD",
            ".git/refs/heads/main",
            ".git/refs/heads/main.lock",
            "node_modules/left-pad/index.js",
            "generated/schema.py",
            "server.log",
            ".gitignore",
        )
    }
    assert {rel for rel, kept in relevant.items() if kept} == {
        "shop/app.py",
        ".git/HEAD",
        ".git/refs/heads/main",
        ".gitignore",
    }
    assert keep.relevant("/elsewhere/app.py") is None


def test_bad_repository_is_one_line(tmp_path: Path) -> None:
    cg = Path(sys.executable).parent / "cg"
    command = [str(cg)] if cg.exists() else [sys.executable, "-m", "cg.cli"]
    done = subprocess.run(
        [*command, "watch", "--repo", str(tmp_path / "missing")], capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0
    assert done.stderr.strip() == f"cg: no such directory: {tmp_path / 'missing'}"
