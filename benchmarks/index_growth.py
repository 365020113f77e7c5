"""Index size over small updates on the embedded store: does a one-line edit grow the database?

Issue 19 saw Django's Kùzu index double (1.04 -> 2.10 GB) over two small updates. This script indexes
each of ``PROJECTS`` (sdists, as the ingest benchmark fetches them) in two scratch copies with the real
CLI, one never rewritten (``kuzu_compact_growth = 0``, the baseline) and one with the default, then
applies ``EDITS`` one-line edits to one function body (one more statement each time) to both, runs
the incremental ``cg index`` after each (the two interleaved) and records the size of the current
generation's database files and the run's write stage. The name resolver is used
(``CG_RESOLVER=name``): what is written, not how calls are resolved, decides the size, and jedi would
only make each round slower. Embeddings come from the shared cache after the first run.

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
from results import cg_command, machine_line, publish  # noqa: E402

from cg.config import Settings  # noqa: E402

EDITS = 12
# (label, sdist name, version, the edited file, the line after which each edit adds a statement)
PROJECTS = [
    (
        "requests 2.32.3",
        "requests",
        "2.32.3",
        "src/requests/_internal_utils.py",
        'def to_native_string(string, encoding="ascii"):\n',
    ),
    ("flask 3.0.3", "flask", "3.0.3", "src/flask/helpers.py", "def get_debug_flag() -> bool:\n"),
]


def run_index(repo: Path, growth: str) -> tuple[float, str]:
    env = {**os.environ, "CG_RESOLVER": "name", "TOKENIZERS_PARALLELISM": "false", "CG_KUZU_COMPACT_GROWTH": growth}
    started = time.perf_counter()
    done = subprocess.run([*cg_command(), "index", str(repo)], check=True, capture_output=True, text=True, env=env)
    return time.perf_counter() - started, done.stdout.splitlines()[0]


def size(repo: Path) -> int:
    """Bytes of the current generation's database files."""
    root = repo / ".cg" / "kuzu"
    current = root / (root / "CURRENT").read_text().split()[0]
    return sum(f.stat().st_size for f in current.iterdir() if f.is_file())


def write_seconds(summary: str) -> float:
    found = re.search(r"write ([0-9.]+)s", summary)
    return float(found.group(1)) if found else float("nan")


def edit(repo: Path, target: str, anchor: str, number: int) -> None:
    path = repo / target
    text = path.read_text()
    assert anchor in text, "the edited function moved"
    path.write_text(text.replace(anchor, f"{anchor}    _edit_{number} = {number}\n", 1))


def measure(source: Path, target: str, anchor: str, variants: dict[str, str]) -> list[tuple[str, dict]]:
    """Both copies through the first run and EDITS edits, the two runs of each step interleaved."""
    rows: list[tuple[str, dict[str, tuple[float, float, int]]]] = []
    with scratch_copy(source, "cg-growth-a-") as never, scratch_copy(source, "cg-growth-b-") as default:
        repos = dict(zip(variants, (never, default), strict=True))
        for number in range(EDITS + 1):
            order = list(variants) if number % 2 == 0 else list(variants)[::-1]
            measured = {}
            for name in order:
                if number:
                    edit(repos[name], target, anchor, number)
                seconds, summary = run_index(repos[name], variants[name])
                assert summary.startswith("updated" if number else "indexed"), summary
                measured[name] = (seconds, write_seconds(summary), size(repos[name]))
            rows.append(("first run (full)" if not number else f"edit {number}", measured))
            print(rows[-1], flush=True)
    return rows


def main() -> None:
    lines = [
        machine_line(),
        "",
        "`python benchmarks/index_growth.py`: each project indexed by `cg index` (Kùzu, name resolver) in",
        f"two copies, then {EDITS} one-line edits of one function body, each followed by an incremental",
        "`cg index`; one copy with `kuzu_compact_growth = 0` (never rewritten: cg before issue 19's fix),",
        "the other with the default; the two runs of each step interleaved. Database = the current",
        "generation's files, in MB; write = the run's write stage, in seconds.",
    ]
    for label, name, version, target, anchor in PROJECTS:
        source = fetch_sdist(name, version)
        variants = {"never rewritten": "0", "rewritten (default)": str(Settings(source).kuzu_compact_growth)}
        rows = measure(source, target, anchor, variants)
        names = list(variants)
        first = {n: rows[0][1][n][2] for n in names}
        lines += [
            "",
            f"{label}, edits of `{target}`:",
            "",
            f"| run | {names[0]} MB | {names[1]} MB | {names[0]} write s | {names[1]} write s |",
            "|---|---:|---:|---:|---:|",
        ]
        for step, measured in rows:
            (_, w0, s0), (_, w1, s1) = measured[names[0]], measured[names[1]]
            lines.append(f"| {step} | {s0 / 1e6:.1f} | {s1 / 1e6:.1f} | {w0:.1f} | {w1:.1f} |")
        last = rows[-1][1]
        growth = ", ".join(f"{n} {last[n][2] / first[n]:.2f}x" for n in names)
        peak = max(measured[names[1]][2] for _, measured in rows)
        writes = {n: sum(m[n][1] for _, m in rows[1:]) for n in names}
        lines += [
            "",
            f"After {EDITS} edits, against each copy's first run: {growth}; the rewritten copy never exceeded",
            f"{peak / 1e6:.1f} MB. Write stage over the {EDITS} edits: {names[0]} {writes[names[0]]:.1f} s,"
            f" {names[1]} {writes[names[1]]:.1f} s; first run {rows[0][1][names[0]][1]:.1f} s against"
            f" {rows[0][1][names[1]][1]:.1f} s.",
        ]
    publish("Index growth over small updates (benchmarks/index_growth.py)", lines)


if __name__ == "__main__":
    main()
