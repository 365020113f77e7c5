"""Worker processes die with their parent: `cg index` killed (SIGKILL or SIGTERM) while its jedi
workers run leaves no process of the run behind, the workers nor multiprocessing's resource tracker;
Ctrl-C (SIGINT to the whole process group, as a terminal sends it) stops the run within a second or
two, not after each worker's file (up to its whole time budget)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="walks /proc")

MODULES = 40
FUNCTIONS = 30


def _generated_shop(root: Path, modules: int = MODULES, functions: int = FUNCTIONS) -> Path:
    """Enough cross-module calls that the jedi phase lasts well beyond the time it takes to kill it."""
    repo = root / "ledger"
    package = repo / "ledger"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    for m in range(modules):
        lines = [f'"""Invoice batch {m}."""', ""]
        lines += [f"from ledger import invoices_{(m + k) % modules} as batch_{k}" for k in range(1, 4)]
        for f in range(functions):
            lines += ["", "", f"def settle_invoice_{f}(amount_cents: int) -> int:"]
            lines += [
                f"    amount_cents = batch_{k}.settle_invoice_{(f + k) % functions}(amount_cents)" for k in (1, 2, 3)
            ]
            lines += ["    return round(abs(amount_cents) * 1.2)"]
        (package / f"invoices_{m}.py").write_text("\n".join(lines) + "\n")
    return repo


def _group(pgid: int) -> dict[int, str]:
    """pid -> command line of every live process in the process group ``pgid``."""
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            if fields[0] == "Z" or int(fields[2]) != pgid:
                continue
            found[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue  # it ended while we looked
    return found


def _workers(pgid: int) -> list[int]:
    return [pid for pid, cmd in _group(pgid).items() if "multiprocessing" in cmd and "resource_tracker" not in cmd]


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _generated_shop(tmp_path_factory.mktemp("workers"))


@pytest.fixture(scope="module")
def big_ledgers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Few files of many calls each: a worker is seconds into one file when Ctrl-C comes."""
    return _generated_shop(tmp_path_factory.mktemp("big-workers"), modules=6, functions=400)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a shell's background job inherits it ignored


@pytest.mark.parametrize(
    "sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT], ids=["SIGKILL", "SIGTERM", "SIGINT (Ctrl-C)"]
)
def test_killing_index_during_jedi_leaves_no_process_behind(
    ledger: Path, big_ledgers: Path, sig: signal.Signals
) -> None:
    if sig == signal.SIGINT:
        ledger = big_ledgers
    cg = Path(sys.executable).parent / "cg"
    command = [str(cg)] if cg.exists() else [sys.executable, "-m", "cg.cli"]
    env = {**os.environ, "CG_JEDI_WORKERS": "2", "CG_RESOLVER": "jedi"}
    proc = subprocess.Popen(
        [*command, "index", str(ledger), "--full"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: every process of the run, wherever re-parented
        preexec_fn=_default_sigint,
    )
    pgid = proc.pid
    try:
        deadline = time.monotonic() + 240
        while len(_workers(pgid)) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert proc.poll() is None, f"cg index ended before its jedi workers were seen: {proc.stderr.read()!r}"
        assert len(_workers(pgid)) == 2, "no jedi workers within the time limit"
        time.sleep(1.0)  # the workers are importing jedi or answering: both must end
        assert proc.poll() is None, "the jedi phase ended too soon for this test to mean anything"
        if sig == signal.SIGINT:  # Ctrl-C: the terminal signals the whole foreground group
            os.killpg(pgid, sig)
            sent = time.monotonic()
            assert proc.wait(timeout=60) == 130, proc.stderr.read()
            assert time.monotonic() - sent < 5.0, f"Ctrl-C took {time.monotonic() - sent:.1f} s to stop the run"
        else:
            proc.send_signal(sig)
            assert proc.wait(timeout=30) == -sig
        deadline = time.monotonic() + 10
        while _group(pgid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _group(pgid) == {}, "processes of the killed run survive it"
    finally:
        for pid in _group(pgid):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert proc.stderr is not None
        proc.stderr.close()


def _hold_parsed_ledger(count: int) -> int:
    """A jedi worker's state at the end of a run, in miniature: many small objects kept alive."""
    global HELD
    HELD = [(f"ledger/invoices_{i % 40}.py", i, [i, str(i)]) for i in range(count)]
    return len(HELD)


HELD: list = []


def test_a_finished_jedi_worker_exits_without_freeing_what_it_holds():
    """Python frees every object when a process exits, and a jedi worker holds the trees and inferences
    of every module it saw: the pool's shutdown waited 2.1 s for that on sqlparse after the last answer
    was in. A worker now ends at once (jedi_resolver._exit_now). Measured against a plain worker holding
    the same objects, in the same test, so a slow machine slows both."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    from cg.ingest.resolve import jedi_resolver

    from .helpers import SHOP

    shutdown: dict[str, float] = {}
    for name, initializer, initargs in (
        ("plain", None, ()),
        ("jedi", jedi_resolver._init_worker, (str(SHOP), os.getpid())),
    ):
        pool = ProcessPoolExecutor(1, mp_context=get_context("spawn"), initializer=initializer, initargs=initargs)
        assert pool.submit(_hold_parsed_ledger, 2_000_000).result() == 2_000_000
        started = time.perf_counter()
        pool.shutdown()
        shutdown[name] = time.perf_counter() - started
    assert shutdown["jedi"] < shutdown["plain"] / 3, shutdown
