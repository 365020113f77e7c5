"""Writers and readers at once: two `cg index` of one repository and a reader loop, bounded in time.
Writers take turns (the second waits, or fails in one line naming the first's pid when it waits too
long); a reader never waits for a writer and always answers from one complete graph."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from cg.graph.generations import Generations
from tests.conftest import ROOT, cg_command, copy_shop
from tests.graphdump import differences
from tests.ingest.crashes import CALLERS, EDIT, EDIT_FILE, env_for, graph_of
from tests.neo4j_env import BACKENDS

DEADLINE = 300.0  # seconds for the whole race; a hang fails the test instead of stalling the suite


def _cg(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    cg = [sys.executable, "-m", "cg.cli"]
    return subprocess.Popen(
        [*cg, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, **env, "PYTHONPATH": str(ROOT)},
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_writers_and_a_reader_loop_end_with_the_clean_graph(backend, clean, tmp_path):
    before, after = clean(backend, False), clean(backend, True)
    repo = copy_shop(tmp_path / "shop")
    env = {**env_for(backend), "CG_INDEX_LOCK_WAIT": str(DEADLINE)}
    cg_command("index", str(repo), "--full", env=env)
    (repo / EDIT_FILE).write_text(EDIT)

    answers: list[subprocess.CompletedProcess[str]] = []
    writers_done = threading.Event()

    def read_loop() -> None:
        while not writers_done.is_set():
            answers.append(cg_command(*CALLERS, "--repo", str(repo), check=False, env=env))

    reader = threading.Thread(target=read_loop)
    reader.start()
    started = time.monotonic()
    writers = [_cg("index", str(repo), env=env) for _ in range(2)]
    try:
        results = [w.communicate(timeout=DEADLINE) for w in writers]
    finally:
        writers_done.set()
        reader.join(timeout=60)
        for w in writers:
            w.kill()
    assert time.monotonic() - started < DEADLINE
    assert [w.returncode for w in writers] == [0, 0], [err for _, err in results]
    outputs = sorted(out.splitlines()[0] for out, _ in results)
    assert outputs[1].startswith("updated ") and outputs[0].startswith("up to date"), outputs  # one after the other

    assert answers, "the reader never got a turn"
    for answer in answers:  # never locked out, never a partial graph: the graph before or after the edit
        assert answer.returncode == 0, answer.stderr
        assert answer.stdout in (before.answers["callers"], after.answers["callers"]), answer.stdout
    assert not (diff := differences(graph_of(repo, backend), after.graph)), "\n".join(diff)


def test_a_second_writer_that_waits_too_long_fails_in_one_line_naming_the_first(tmp_path):
    repo = copy_shop(tmp_path / "shop")
    (repo / ".cg").mkdir()
    lock = Generations(repo / ".cg").lock(wait=0)
    try:
        result = cg_command("index", str(repo), check=False, env={"CG_RESOLVER": "name", "CG_INDEX_LOCK_WAIT": "0.5"})
    finally:
        lock.release()
    assert result.returncode == 75  # EX_TEMPFAIL, as a Neo4j writer refused by the lease
    assert result.stderr == (
        f"cg: another `cg index` (pid {os.getpid()}) is writing the index of {repo}; waited 0.5s,"
        " try again when it has finished\n"
    )
