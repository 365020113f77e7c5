"""Fault injection: `cg index` killed (SIGKILL, SIGTERM) at each phase, in a subprocess, on both
backends (Neo4j with CG_TEST_NEO4J=1). After each kill: a query answers exactly as a clean index of
the tree before or after the edit does, or refuses in one line with a non-zero exit; the next
`cg index` restores a graph equal to a clean run's; no process of the killed run is left. The kill
points wrap pipeline phases and store methods from outside (tests/ingest/crash_runner.py): product
code has no fault hooks. The name resolver keeps the runs short, except where jedi's workers are the
point."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, cg_command, copy_shop
from tests.graphdump import differences
from tests.ingest.crash_runner import KILL_POINTS
from tests.ingest.crashes import EDIT, EDIT_FILE, Clean, answers_of, env_for, graph_of
from tests.neo4j_env import BACKENDS, neo4j_settings


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _kill_run(repo: Path, point: str, sig: str, env: dict[str, str], tmp: Path, full: bool = False) -> None:
    """`cg index` under the crash runner, killed at ``point``; then no process of it may be left."""
    pids = tmp / f"pids-{point}-{sig}"
    command = [sys.executable, "-m", "tests.ingest.crash_runner", point, sig, "cg", "index", str(repo)]
    result = subprocess.run(
        [*command, *(["--full"] if full else [])],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env={**os.environ, **env, "CG_CRASH_PIDS": str(pids), "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == -signal.Signals[f"SIG{sig}"], (point, result.returncode, result.stderr[-2000:])
    children = [int(p) for p in pids.read_text().split()] if pids.exists() else []
    deadline = time.monotonic() + 15
    while any(_alive(p) for p in children) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [p for p in children if _alive(p)], f"processes of the killed run outlived it: {children}"


def _check_queries(repo: Path, env: dict[str, str], allowed: list[Clean]) -> None:
    """Each query answers exactly as one of the clean indexes does, or refuses in one line."""
    answers = answers_of(repo, env)
    for name, result in answers.items():
        if result.returncode == 0:
            assert any(result.stdout == c.answers[name] for c in allowed), (
                f"`cg {name}` answered wrongly:\n{result.stdout}"
            )
        else:
            assert result.stderr.startswith("cg: ") and result.stderr.count("\n") == 1, result.stderr
            assert "internal error" not in result.stderr, result.stderr
    served = {
        i
        for name, r in answers.items()
        if r.returncode == 0
        for i, c in enumerate(allowed)
        if r.stdout == c.answers[name]
    }
    assert len(served) <= 1, "the two queries were answered from two different graphs"
    status = cg_command("status", "--repo", str(repo), check=False, env=env)
    if status.returncode != 0:
        assert status.stderr.startswith("cg: ") and status.stderr.count("\n") == 1, status.stderr
    elif "up to date with the working tree" in status.stdout:  # then the graph is the tree's own
        assert answers["callers"].returncode == 0 and answers["callers"].stdout == allowed[-1].answers["callers"]


def _recovers(repo: Path, backend: str, env: dict[str, str], want: Clean) -> None:
    rerun = cg_command("index", str(repo), check=False, env=env)
    assert rerun.returncode == 0, rerun.stderr
    assert not (diff := differences(graph_of(repo, backend), want.graph)), "\n".join(diff)
    assert answers_of(repo, env)["callers"].stdout == want.answers["callers"]
    if backend == "kuzu":  # only the current generation is left, and no staged one of the killed run
        generations = [p for p in (repo / ".cg" / "kuzu").iterdir() if p.is_dir()]
        assert len(generations) == 1, generations


CASES = [(point, "KILL") for point in KILL_POINTS] + [
    (point, "TERM") for point in ("during-jedi", "mid-write", "before-switch")
]


def _params(cases):
    """Each case on each backend, the Neo4j ones with BACKENDS' marks (run with CG_TEST_NEO4J=1)."""
    stores = [(b, ()) if isinstance(b, str) else (b.values[0], b.marks) for b in BACKENDS]
    return [pytest.param(name, point, sig, marks=marks) for name, marks in stores for point, sig in cases]


@pytest.mark.parametrize(("backend", "point", "sig"), _params(CASES))
def test_a_killed_incremental_run_never_answers_wrongly_and_the_next_run_restores(backend, point, sig, clean, tmp_path):
    """An indexed tree, an edit, then `cg index` killed: queries answer as the tree before or after
    the edit does (never anything else), and the next `cg index` gives the graph of the edited tree."""
    resolver = "jedi" if point == "during-jedi" else "name"
    before, after = clean(backend, False, resolver), clean(backend, True, resolver)
    repo = copy_shop(tmp_path / "shop")
    env = env_for(backend, resolver)
    cg_command("index", str(repo), "--full", env=env)
    (repo / EDIT_FILE).write_text(EDIT)
    # jedi runs in process for one edited file; a full run spreads the whole tree over workers
    _kill_run(repo, point, sig, env, tmp_path, full=point == "during-jedi")
    _check_queries(repo, env, [before, after])
    _recovers(repo, backend, env, after)


FIRST_INDEX = [(p, "KILL") for p in ("after-plan", "during-embed", "mid-write", "before-switch", "after-switch")]


@pytest.mark.parametrize(("backend", "point", "sig"), _params(FIRST_INDEX))
def test_a_killed_first_index_is_refused_in_one_line_then_rebuilt(backend, point, sig, clean, tmp_path):
    """No index yet, `cg index` killed: queries refuse in one line (never "0 callers", never "built
    by an older cg") until a run completes; the next `cg index` builds the clean graph."""
    want = clean(backend, True)
    repo = copy_shop(tmp_path / "shop")
    (repo / EDIT_FILE).write_text(EDIT)
    env = env_for(backend)
    if backend == "neo4j":
        from cg.graph.neo4j_store import Neo4jStore

        with Neo4jStore(neo4j_settings(repo)) as store:
            store.reset()  # a first index: nothing of an earlier test's repository in the server
    _kill_run(repo, point, sig, env, tmp_path)
    _check_queries(repo, env, [want])
    if point != "after-switch":
        refused = answers_of(repo, env)["callers"]
        assert refused.returncode != 0 and "no complete index yet" in refused.stderr, refused.stderr
    _recovers(repo, backend, env, want)


def test_the_old_in_place_write_segfaults_after_a_kill_and_generations_never_reopen_it(tmp_path):
    """The Kùzu bug issue 14 found, reproduced on the old way of writing: a first index killed in the
    middle of its writes, then the same database file opened again and written over, crashes the
    process (SIGSEGV) on kuzu 0.11.3. With generations the killed run's database is never opened
    again: the next writer removes it and starts from the last complete generation (or empty)."""
    import kuzu

    repo = copy_shop(tmp_path / "shop")
    env = {**os.environ, "CG_RESOLVER": "name", "PYTHONPATH": str(ROOT)}
    runner = [sys.executable, "-m", "tests.ingest.crash_runner"]
    killed = subprocess.run([*runner, "mid-write", "KILL", "in-place", str(repo)], env=env, cwd=ROOT, timeout=600)
    assert killed.returncode == -signal.SIGKILL
    assert (repo / ".cg" / "graph.kuzu.wal").exists()  # the killed run's writes, to be replayed on open
    again = subprocess.run(
        [*runner, "none", "KILL", "in-place", str(repo)], env=env, cwd=ROOT, timeout=600, capture_output=True
    )
    if again.returncode != -signal.SIGSEGV:
        pytest.xfail(f"kuzu {kuzu.__version__} no longer crashes here (rc {again.returncode}): the workaround may go")

    # the same kill under generations: the staged database is left behind, and never opened again
    fresh = copy_shop(tmp_path / "fresh")
    _kill_run(fresh, "mid-write", "KILL", {"CG_RESOLVER": "name"}, tmp_path)
    staged = [p for p in (fresh / ".cg" / "kuzu").iterdir() if p.is_dir()]
    assert len(staged) == 1 and (staged[0] / "graph.kuzu.wal").exists()
    assert not (fresh / ".cg" / "kuzu" / "CURRENT").exists()
    rerun = cg_command("index", str(fresh), env={"CG_RESOLVER": "name"})
    assert rerun.returncode == 0
    assert not staged[0].exists()


def test_an_index_shipped_inside_the_repository_is_never_opened(tmp_path):
    """A pointer and a generation copied in from elsewhere (a clone, a tarball, a pull) do not check
    against the inodes they name, and an old-layout .cg/graph.kuzu is an older cg's: queries refuse in
    one line, and `cg index` builds its own."""
    source = copy_shop(tmp_path / "source")
    cg_command("index", str(source), env={"CG_RESOLVER": "name"})
    shipped = copy_shop(tmp_path / "shipped")
    shutil.copytree(source / ".cg" / "kuzu", shipped / ".cg" / "kuzu", ignore=shutil.ignore_patterns("*.lock"))
    refused = cg_command("callers", "schedule_payment_retry", "--repo", str(shipped), check=False)
    assert refused.returncode == 1 and "not written by cg here" in refused.stderr, refused.stderr

    old = copy_shop(tmp_path / "old-layout")
    (old / ".cg").mkdir()
    shutil.copyfile(next((source / ".cg" / "kuzu").glob("*/graph.kuzu")), old / ".cg" / "graph.kuzu")
    refused = cg_command("status", "--repo", str(old), check=False)
    assert refused.returncode == 1 and "built by an older cg" in refused.stderr, refused.stderr
    rebuilt = cg_command("index", str(old), env={"CG_RESOLVER": "name"})
    assert rebuilt.stdout.startswith("indexed "), rebuilt.stdout  # a full run
    assert not (old / ".cg" / "graph.kuzu").exists()
    assert "5 callers" in cg_command("callers", "schedule_payment_retry", "--repo", str(old)).stdout
