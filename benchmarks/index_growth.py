"""Index size over small updates on the embedded store: does a one-line edit grow the database?

Issue 19 saw Django's Kùzu index double (1.04 -> 2.10 GB) over two small updates. This script indexes
requests 2.32.3 (the ingest benchmark's sdist) in a scratch copy with the real CLI, then applies
``EDITS`` one-line edits to one function body (``to_native_string`` in ``_internal_utils.py``, one more
statement each time), runs the incremental ``cg index`` after each and records the size of the current
generation's database file, the whole ``.cg/kuzu`` folder (all generations left on disk) and the
run's write stage. The name resolver is used (``CG_RESOLVER=name``): what is written, not how calls are
resolved, decides the size, and jedi would only make each round slower. Embeddings come from the
shared cache after the first run.

    python benchmarks/index_growth.py      # writes the "Index growth over small updates" section
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from ingest import fetch_sdist  # noqa: E402
from latency import scratch_copy  # noqa: E402
from results import machine_line, publish  # noqa: E402

EDITS = 12
TARGET = Path("src/requests/_internal_utils.py")
ANCHOR = 'def to_native_string(string, encoding="ascii"):\n'


def cg() -> list[str]:
    executable = Path(sys.executable).parent / "cg"
    return [str(executable)] if executable.exists() else [sys.executable, "-m", "cg.cli"]


def run_index(repo: Path) -> tuple[float, str]:
    env = {**os.environ, "CG_RESOLVER": "name", "TOKENIZERS_PARALLELISM": "false"}
    started = time.perf_counter()
    done = subprocess.run([*cg(), "index", str(repo)], check=True, capture_output=True, text=True, env=env)
    return time.perf_counter() - started, done.stdout.splitlines()[0]


def sizes(repo: Path) -> tuple[int, int]:
    """(bytes of the current generation's database files, bytes of everything under .cg/kuzu)."""
    root = repo / ".cg" / "kuzu"
    current = root / (root / "CURRENT").read_text().split()[0]
    generation = sum(f.stat().st_size for f in current.iterdir() if f.is_file())
    folder = sum(f.stat().st_size for f in root.rglob("*") if f.is_file())
    return generation, folder


def write_seconds(summary: str) -> str:
    found = re.search(r"write ([0-9.]+)s", summary)
    return found.group(1) if found else "-"


def main() -> None:
    source = fetch_sdist("requests", "2.32.3")
    rows = []
    with scratch_copy(source, "cg-index-growth-") as repo:
        seconds, summary = run_index(repo)
        rows.append(("first run (full)", seconds, write_seconds(summary), *sizes(repo)))
        target = repo / TARGET
        for edit in range(1, EDITS + 1):
            text = target.read_text()
            assert ANCHOR in text, "the edited function moved"
            target.write_text(text.replace(ANCHOR, f"{ANCHOR}    _edit_{edit} = {edit}\n", 1))
            seconds, summary = run_index(repo)
            assert summary.startswith("updated"), summary
            rows.append((f"edit {edit}", seconds, write_seconds(summary), *sizes(repo)))
            print(rows[-1], flush=True)
    first = rows[0][3]
    lines = [
        machine_line(),
        "",
        "`python benchmarks/index_growth.py`: requests 2.32.3 indexed by `cg index` (Kùzu, name resolver),",
        f"then {EDITS} one-line edits of one function body (`{TARGET}`), each followed by an incremental",
        "`cg index`.",
        "Database = the current generation's files; folder = everything under `.cg/kuzu` (older",
        "generations are removed by the next writer).",
        "",
        "| run | wall s | write s | database MB | x first run | .cg/kuzu MB |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, seconds, write, generation, folder in rows:
        megabytes = f"{generation / 1e6:.1f} | {generation / first:.2f} | {folder / 1e6:.1f}"
        lines.append(f"| {label} | {seconds:.1f} | {write} | {megabytes} |")
    growth = rows[-1][3] / first
    lines += ["", f"After {EDITS} one-line edits the database is {growth:.2f}x its size after the first run."]
    publish("Index growth over small updates (benchmarks/index_growth.py)", lines)


if __name__ == "__main__":
    main()
