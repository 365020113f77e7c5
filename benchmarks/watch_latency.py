"""Watch latency: with `cg watch` running, how long from saving an edit to an answer that reflects it?

Projects: examples/shop and requests 2.32.3 (the ingest benchmark's sdist), each a fresh copy indexed
once with `cg index` (default settings: jedi, the ONNX embedder), then `cg watch` started on it in a
subprocess, as a developer or an agent's host runs it (default debounce, 300 ms). Each round edits
one function body so that it calls, or stops calling, a helper, then polls `callers` of that helper
through the api (a fresh read-only session per question, as a new question would open one) until the
answer has, or no longer has, the edited function: every IDLE_POLL_S until the watcher reports its
pass (opening the index 20 times a second took CPU from the pass on a 2-core machine), then every
POLL_S; the answer cannot be fresh before the pass switches the index, so this costs at most the
time between the switch and the report of it. The time is taken from just before the file is
written to the first answer that shows the edit: debounce + the incremental pass + opening the new
index + the query. Rounds alternate adding and removing the call; the watcher's own pass time (its
JSON line) is reported beside it.

    python benchmarks/watch_latency.py      # writes the "Watch latency" section of benchmarks/RESULTS.md
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from ingest import fetch_sdist  # noqa: E402
from results import machine_line, model_line, publish  # noqa: E402

from cg.api import open_index  # noqa: E402

ROUNDS = 6
POLL_S = 0.02  # between two questions once the watcher has reported its pass
IDLE_POLL_S = 0.25  # between two questions before that
TIMEOUT_S = 300.0


def cg_command() -> list[str]:
    cg = Path(sys.executable).parent / "cg"
    return [str(cg)] if cg.exists() else [sys.executable, "-m", "cg.cli"]


class Project:
    def __init__(self, name: str, source: Path, path: str, anchor: str, call: str, caller: str, callee: str) -> None:
        self.name, self.source, self.path = name, source, path
        self.anchor, self.call = anchor, call  # the call line goes right after the anchor (a def line)
        self.caller, self.callee = caller, callee  # qualified names


def projects() -> list[Project]:
    return [
        Project(
            "examples/shop",
            ROOT / "examples" / "shop",
            "shop/payments/retry.py",
            "def is_retryable(error: BaseException) -> bool:\n",
            "    compute_backoff(1, 1.0, 1.0)\n",
            "shop.payments.retry.is_retryable",
            "shop.payments.retry.compute_backoff",
        ),
        Project(
            "requests 2.32.3",
            fetch_sdist("requests", "2.32.3") / "src",
            "requests/utils.py",
            "def guess_filename(obj):\n",
            "    to_key_val_list(None)\n",
            "requests.utils.guess_filename",
            "requests.utils.to_key_val_list",
        ),
    ]


def callers_of(repo: Path, callee: str) -> set[str]:
    try:
        with open_index(repo) as index:
            return {n["qualname"] for n in index.callers(callee).as_dict()["callers"]}
    except Exception:  # noqa: BLE001 - a generation switched under the open: ask again at the next poll
        return set()


def measure(project: Project, scratch: Path) -> dict:
    repo = scratch / project.name.split()[0].replace("/", "-")
    shutil.copytree(project.source, repo, ignore=shutil.ignore_patterns(".cg", "__pycache__"))
    subprocess.run([*cg_command(), "index", str(repo)], check=True, capture_output=True)
    with open_index(repo) as index:
        stats = index.stats().as_dict()
    watcher = subprocess.Popen(
        [*cg_command(), "watch", "--repo", str(repo), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    passes: queue.Queue[dict] = queue.Queue()
    ready = threading.Event()
    threading.Thread(target=lambda: [passes.put(json.loads(line)) for line in watcher.stdout], daemon=True).start()
    threading.Thread(target=lambda: [ready.set() for line in watcher.stderr if "watching" in line], daemon=True).start()
    latencies: list[float] = []
    pass_seconds: list[float] = []
    jedi_seconds: list[float] = []
    try:
        if not ready.wait(TIMEOUT_S):
            raise SystemExit(f"{project.name}: cg watch did not start")
        while not passes.empty():
            passes.get()
        target = repo / project.path
        original = target.read_text()
        if project.anchor not in original:
            raise SystemExit(f"benchmark edit no longer applies to {project.path}: {project.anchor!r}")
        edited = original.replace(project.anchor, project.anchor + project.call, 1)
        for n in range(ROUNDS):
            adding = n % 2 == 0
            started = time.perf_counter()
            target.write_text(edited if adding else original)
            done: dict | None = None
            while (project.caller in callers_of(repo, project.callee)) != adding:
                if time.perf_counter() - started > TIMEOUT_S:
                    raise SystemExit(f"{project.name}: the answer did not change within {TIMEOUT_S:.0f} s")
                if done is None:  # slow polls while the pass runs: opening the index costs CPU the pass needs
                    try:
                        done = passes.get(timeout=IDLE_POLL_S)
                    except queue.Empty:
                        pass
                else:
                    time.sleep(POLL_S)
            latencies.append(time.perf_counter() - started)
            done = done or passes.get(timeout=TIMEOUT_S)
            pass_seconds.append(done["seconds"])
            jedi_seconds.append(done["stages"].get("jedi", 0.0))
            print(f"{project.name} round {n + 1}: {latencies[-1]:.2f} s (pass {done['seconds']:.2f} s)", flush=True)
            time.sleep(0.5)  # let a follow-up pass (if any) end before the next edit
            while not passes.empty():
                passes.get()
    finally:
        watcher.terminate()
        watcher.wait(timeout=30)
    return {"latencies": latencies, "passes": pass_seconds, "jedi": jedi_seconds, "stats": stats}


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for project in projects():
            found = measure(project, Path(scratch))
            lat, passes, stats = found["latencies"], found["passes"], found["stats"]
            median, pass_median, jedi = (
                statistics.median(lat),
                statistics.median(passes),
                statistics.median(found["jedi"]),
            )
            rows.append(
                f"| {project.name} | {stats.get('File', 0)} | {stats.get('Symbol', 0)} | {len(lat)} |"
                f" **{median:.2f}** | {min(lat):.2f} | {max(lat):.2f} | {pass_median:.2f} | {jedi:.2f} |"
            )
    publish(
        "Watch latency: from save to fresh answer (benchmarks/watch_latency.py)",
        [
            machine_line(),
            "",
            f"`python benchmarks/watch_latency.py`: `cg watch` (default debounce 300 ms, jedi, {model_line()})",
            "running in its own process on a fresh indexed copy; each round edits one function body to call, or",
            "stop calling, a helper, and polls `callers` of the helper through the api (every 250 ms while the",
            "pass runs, every 20 ms once the watcher reported it) until the answer shows the edit. Seconds",
            "from the write to that answer (debounce + incremental pass + a new read-only session + the",
            "query); pass: the watcher's own time for the pass, and of it the jedi stage (worker start included).",
            "",
            "| project | files | definitions | rounds | median s | min s | max s | pass median s | jedi median s |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
            *rows,
        ],
    )


if __name__ == "__main__":
    main()
