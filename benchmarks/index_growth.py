"""Index size over small updates on the embedded store: does a one-line edit grow the database?

Issue 19 saw Django's Kùzu index double (1.04 -> 2.10 GB) over two small updates. This script indexes
requests 2.32.3 (the ingest benchmark's sdist) in two scratch copies with the real CLI, one never
rewritten (``kuzu_compact_growth = 0``, the baseline) and one with the default, then applies ``EDITS``
one-line edits to one function body (``to_native_string`` in ``_internal_utils.py``, one more
statement each time) to both, runs the incremental ``cg index`` after each (the two interleaved) and
records the size of the current generation's database files and the run's write stage. The name
resolver is used (``CG_RESOLVER=name``): what is written, not how calls are resolved, decides the
size, and jedi would only make each round slower. Embeddings come from the shared cache after the
first run.

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

from cg.config import Settings  # noqa: E402

EDITS = 12
TARGET = Path("src/requests/_internal_utils.py")
ANCHOR = 'def to_native_string(string, encoding="ascii"):\n'


def cg() -> list[str]:
    executable = Path(sys.executable).parent / "cg"
    return [str(executable)] if executable.exists() else [sys.executable, "-m", "cg.cli"]


def run_index(repo: Path, growth: str) -> tuple[float, str]:
    env = {**os.environ, "CG_RESOLVER": "name", "TOKENIZERS_PARALLELISM": "false", "CG_KUZU_COMPACT_GROWTH": growth}
    started = time.perf_counter()
    done = subprocess.run([*cg(), "index", str(repo)], check=True, capture_output=True, text=True, env=env)
    return time.perf_counter() - started, done.stdout.splitlines()[0]


def size(repo: Path) -> int:
    """Bytes of the current generation's database files."""
    root = repo / ".cg" / "kuzu"
    current = root / (root / "CURRENT").read_text().split()[0]
    return sum(f.stat().st_size for f in current.iterdir() if f.is_file())


def write_seconds(summary: str) -> float:
    found = re.search(r"write ([0-9.]+)s", summary)
    return float(found.group(1)) if found else float("nan")


def edit(repo: Path, number: int) -> None:
    target = repo / TARGET
    text = target.read_text()
    assert ANCHOR in text, "the edited function moved"
    target.write_text(text.replace(ANCHOR, f"{ANCHOR}    _edit_{number} = {number}\n", 1))


def main() -> None:
    source = fetch_sdist("requests", "2.32.3")
    variants = {"never rewritten": "0", "rewritten (default)": str(Settings(source).kuzu_compact_growth)}
    rows: list[tuple[str, dict[str, tuple[float, float, int]]]] = []
    with scratch_copy(source, "cg-growth-a-") as never, scratch_copy(source, "cg-growth-b-") as default:
        repos = dict(zip(variants, (never, default), strict=True))
        for number in range(EDITS + 1):
            order = list(variants) if number % 2 == 0 else list(variants)[::-1]  # interleaved
            measured = {}
            for name in order:
                if number:
                    edit(repos[name], number)
                seconds, summary = run_index(repos[name], variants[name])
                assert summary.startswith("updated" if number else "indexed"), summary
                measured[name] = (seconds, write_seconds(summary), size(repos[name]))
            rows.append(("first run (full)" if not number else f"edit {number}", measured))
            print(rows[-1], flush=True)
    names = list(variants)
    first = {name: rows[0][1][name][2] for name in names}
    lines = [
        machine_line(),
        "",
        "`python benchmarks/index_growth.py`: requests 2.32.3 indexed by `cg index` (Kùzu, name resolver) in",
        f"two copies, then {EDITS} one-line edits of one function body (`{TARGET}`), each followed by an",
        "incremental `cg index`; one copy with `kuzu_compact_growth = 0` (never rewritten: cg before issue",
        f"19's fix), the other with the default ({variants[names[1]]}); the two runs of each step interleaved.",
        "Database = the current generation's files, in MB; write = the run's write stage, in seconds.",
        "",
        f"| run | {names[0]} MB | {names[1]} MB | {names[0]} write s | {names[1]} write s |",
        "|---|---:|---:|---:|---:|",
    ]
    for label, measured in rows:
        (_, w0, s0), (_, w1, s1) = measured[names[0]], measured[names[1]]
        lines.append(f"| {label} | {s0 / 1e6:.1f} | {s1 / 1e6:.1f} | {w0:.1f} | {w1:.1f} |")
    last = rows[-1][1]
    growth = ", ".join(f"{name} {last[name][2] / first[name]:.2f}x" for name in names)
    peak = max(measured[names[1]][2] for _, measured in rows)
    writes = {name: sum(m[name][1] for _, m in rows[1:]) for name in names}
    lines += [
        "",
        f"After {EDITS} edits, against each copy's first run: {growth}; the rewritten copy never exceeded",
        f"{peak / 1e6:.1f} MB. Write stage over the {EDITS} edits: {names[0]} {writes[names[0]]:.1f} s,"
        f" {names[1]} {writes[names[1]]:.1f} s.",
    ]
    publish("Index growth over small updates (benchmarks/index_growth.py)", lines)


if __name__ == "__main__":
    main()
