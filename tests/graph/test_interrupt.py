"""Ctrl-C stops an index run within a second or two even while Kùzu runs one long statement (a big
index's compaction runs ``EXPORT DATABASE`` and ``COPY`` for a minute): cg/graph/kuzu_store.py,
``interrupt_on_ctrl_c``. The run's generation is discarded and the last complete one stays current."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

# A writer in a run, inside one statement that takes minutes (about 10^11 rows of arithmetic).
SCRIPT = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from cg.config import load_settings
    from cg.graph.backends import open_store

    settings = load_settings(Path(sys.argv[1]))
    with open_store(settings, read_only=False) as store:
        with store.run(full=False, dimension=384):
            store.set_meta("note", "written by the interrupted run")
            print("statement started", flush=True)
            store._conn.execute(
                "UNWIND range(1, 100000) AS a UNWIND range(1, 100000) AS b UNWIND range(1, 10) AS c"
                " RETURN sum(a * b + c)"
            )
    """
)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a shell's background job inherits it ignored


def test_ctrl_c_stops_a_long_kuzu_statement_and_keeps_the_last_generation(indexed_shop: tuple[Path, str]):
    repo, _ = indexed_shop
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(repo)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "statement started"
        time.sleep(1.0)  # inside Kùzu by now
        proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        proc.wait(timeout=60)
        assert time.monotonic() - sent < 3.0, f"Ctrl-C took {time.monotonic() - sent:.1f} s"
        assert proc.returncode != 0 and "KeyboardInterrupt" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    from cg.config import load_settings
    from cg.graph.backends import open_store

    with open_store(load_settings(repo), read_only=True) as store:
        assert store.get_meta("note") is None  # the interrupted run's generation never became current
        assert store.stats().get("Symbol", 0) > 100
    assert not [p for p in (repo / ".cg" / "kuzu").iterdir() if p.name.endswith(".tmp")]


# Ctrl-C in the moment a bulk load reopens its database (KuzuStore._reopen): the connection the
# watcher would interrupt is closed. The watcher must live on (a later Ctrl-C still interrupts Kùzu)
# and print no thread's traceback. The script's own handler keeps the main thread running, so the
# watcher's handling of the signal is seen whole.
CLOSED = textwrap.dedent(
    """
    import os, signal, sys, threading, time
    from pathlib import Path
    from cg.graph.kuzu_store import KuzuStore, interrupt_on_ctrl_c

    store = KuzuStore(Path(sys.argv[1]) / "graph.kuzu")
    signal.signal(signal.SIGINT, lambda *_: None)
    with interrupt_on_ctrl_c(lambda: store._conn.interrupt()):
        store._conn.close()
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)
        print("watching", any(t.name == "cg-kuzu-interrupt" and t.is_alive() for t in threading.enumerate()))
    """
)


def test_ctrl_c_while_the_database_is_reopened_keeps_the_watch_without_a_traceback(tmp_path: Path):
    proc = subprocess.run([sys.executable, "-c", CLOSED, str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "watching True" and "Exception in thread" not in proc.stderr, proc.stderr
