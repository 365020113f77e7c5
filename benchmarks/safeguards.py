"""What the safety work costs: `cg index` time and index size on disk, this checkout against a baseline
commit, side by side in one run.

The baseline is another commit of this repository (default: the last commit before issue 14's
safeguards — the index state as a pickle, no secret redaction, no generations, no per-file caps),
unpacked with `git archive` into a temporary directory and run from there with the same virtualenv,
so both sides share the interpreter, the installed libraries and the machine's load at the moment.
The runs are interleaved (baseline, current, baseline, current, ...) and each is its own process;
every repository is a fresh copy per side, and each side has its own embedding cache, warmed by one
untimed run first, so the times compare parsing, resolution, safeguards and writes, not the model.

Measured per project: a full `cg index --rebuild` (median of the rounds), an incremental `cg index`
after a one-line edit to one file (where copying a generation shows), and the size on disk of `.cg`
(the graph and the index state; the embedding cache lives elsewhere) per 1,000 lines of indexed code.

    python benchmarks/safeguards.py [--baseline REF] [--rounds N]   # writes the "Safeguards" section
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from ingest import fetch_sdist  # noqa: E402
from results import machine_line, model_line, write_section  # noqa: E402

BASELINE = "f7a99fd"  # main before issue 14's safeguards landed
PROJECTS = [("requests", "2.32.3"), ("httpx", "0.27.2")]
EDITS = {  # one line appended to one file: the incremental run's change
    "examples/shop": "shop/payments/retry.py",
    "requests": "src/requests/help.py",
    "httpx": "httpx/_utils.py",
}


@dataclass
class Side:
    """One code base under test: where its `cg` package lives and its own embedding cache."""

    name: str
    code: Path
    cache: Path
    full: list[float] = field(default_factory=list)
    incremental: list[float] = field(default_factory=list)
    size: int = 0
    loc: int = 0

    def cg(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        env = {**os.environ, "PYTHONPATH": str(self.code), "CG_CACHE_DIR": str(self.cache)}
        return subprocess.run(  # from the code's own directory: `python -c` puts the cwd first on the path
            [sys.executable, "-c", "from cg.cli import main; main()", *args],
            cwd=self.code,
            env=env,
            check=check,
            capture_output=True,
            text=True,
        )

    def timed_index(self, repo: Path, *flags: str) -> float:
        started = time.perf_counter()
        self.cg("index", str(repo), "--json", *flags)
        return time.perf_counter() - started


def unpack(ref: str, target: Path) -> Path:
    """The ``cg`` package of ``ref``, from `git archive` (nothing of the work tree is touched)."""
    data = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "cg"], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(target, filter="data")
    return target


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def lines_of_code(side: Side, repo: Path) -> int:
    out = side.cg("cypher", "MATCH (f:File) RETURN sum(f.loc) AS loc", "--json", "--repo", str(repo), check=False)
    try:
        return int(json.loads(out.stdout)[0]["loc"] or 0)
    except (ValueError, KeyError, IndexError, TypeError):
        return 0


def fresh_copy(source: Path, work: Path, name: str) -> Path:
    target = work / name
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".cg", "__pycache__"))
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=BASELINE, help="the commit to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", help="one project (shop, requests, httpx); prints, writes nothing")
    args = parser.parse_args()

    projects = [("examples/shop", ROOT / "examples" / "shop")]
    projects += [(name, fetch_sdist(name, version)) for name, version in PROJECTS]
    if args.only:
        projects = [(label, path) for label, path in projects if label.endswith(args.only)]
    rows = []
    with tempfile.TemporaryDirectory(prefix="cg-safeguards-") as tmp:
        work = Path(tmp)
        sides = [
            Side(f"baseline {args.baseline}", unpack(args.baseline, work / "baseline"), work / "cache-baseline"),
            Side("this checkout", ROOT, work / "cache-current"),
        ]
        for label, source in projects:
            for side in sides:
                side.full, side.incremental = [], []
                side.timed_index(fresh_copy(source, work, "warm"), "--rebuild")  # warms the embedding cache
            for _ in range(args.rounds):
                for i, side in enumerate(sides):
                    repo = fresh_copy(source, work, f"repo-{i}")
                    side.full.append(side.timed_index(repo, "--rebuild"))
                    edited = repo / EDITS[label.split()[0]]
                    edited.write_text(edited.read_text() + "\n# retry budget reviewed\n")
                    side.incremental.append(side.timed_index(repo))
                    side.size, side.loc = dir_bytes(repo / ".cg"), lines_of_code(side, repo)
            rows.append(
                (
                    label,
                    [
                        (s.name, statistics.median(s.full), statistics.median(s.incremental), s.size, s.loc)
                        for s in sides
                    ],
                )
            )
            print(label, rows[-1][1], flush=True)

    lines = [
        machine_line(),
        "",
        f"Each cell is the median of {args.rounds} interleaved runs, each `cg index` in its own process on the",
        "embedded (Kùzu) store with a warm embedding cache (model: " + model_line() + "). Baseline: commit",
        f"`{args.baseline}` unpacked beside this checkout and run with the same interpreter. Incremental = one",
        "line appended to one file. Size = `.cg` on disk after the incremental run (graph + index state).",
        "",
        "| project | code | full index s | incremental s | `.cg` MB | lines of code | MB per 1k lines |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, measured in rows:
        for name, full, incremental, size, loc in measured:
            per = f"{size / 1e6 / (loc / 1000):.1f}" if loc else "n/a"
            lines.append(f"| {label} | {name} | {full:.1f} | {incremental:.1f} | {size / 1e6:.1f} | {loc} | {per} |")
        (_, base_full, base_inc, *_), (_, cur_full, cur_inc, *_) = measured
        lines.append(
            f"| {label} | ratio this / baseline | {cur_full / base_full:.2f} | {cur_inc / base_inc:.2f} | | | |"
        )
    if args.only:
        print("\n".join(lines))
    else:
        write_section("Safeguards", "\n".join(lines))


if __name__ == "__main__":
    main()
