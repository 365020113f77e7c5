"""The first run a new user makes, timed: ``scripts/demo`` on a fresh clone of this checkout, cold and
warm, in one run.

- cold: an empty pip cache and an empty cg cache, so pip downloads every wheel of the default install
  and cg writes the model's ONNX graph (the nearest this machine gets to a first run anywhere);
- warm: another fresh clone (a new ``.venv``, nothing indexed) with the pip and cg caches the cold
  run left, what a user who ran it once, or who has the wheels cached, gets.

Each run is a ``git clone`` of HEAD into a temporary folder, then ``scripts/demo`` in it with its
output captured; the seconds, the virtualenv's size and the 1-minute load average before and after
are recorded. Goal (issue 17): the warm run in under 90 s.

    python benchmarks/demo_time.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from results import machine_line, publish  # noqa: E402

GOAL_WARM_SECONDS = 90


def venv_mb(folder: Path) -> int:
    """Megabytes under ``folder`` (0 when it was never made: pip found everything in a wheel folder)."""
    if not folder.exists():
        return 0
    out = subprocess.run(["du", "-sm", str(folder)], capture_output=True, text=True, check=True).stdout
    return int(out.split()[0])


def demo(work: Path, name: str, pip_cache: Path, cg_cache: Path) -> dict:
    """One ``scripts/demo`` on a fresh clone: seconds, venv MB, load before/after, its last line."""
    clone = work / name
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")},
        "PIP_CACHE_DIR": str(pip_cache),
        "CG_CACHE_DIR": str(cg_cache),
    }
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    result = subprocess.run(["bash", "scripts/demo"], cwd=clone, env=env, capture_output=True, text=True, timeout=3600)
    seconds = time.perf_counter() - started
    load_after = os.getloadavg()[0]
    if result.returncode != 0:
        raise SystemExit(f"scripts/demo ({name}) failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    answer = [line for line in result.stdout.splitlines() if line.strip()]
    return {
        "seconds": seconds,
        "venv": venv_mb(clone / ".venv"),
        "load": (load_before, load_after),
        "first": answer[0] if answer else "",
    }


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="cg-demo-time-"))
    try:
        pip_cache, cg_cache = work / "pip-cache", work / "cg-cache"
        runs = {
            "cold (empty pip and cg caches)": demo(work, "cold", pip_cache, cg_cache),
            "warm (the caches the cold run left, a fresh clone)": demo(work, "warm", pip_cache, cg_cache),
        }
        pip_mb = venv_mb(pip_cache)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    lines = [
        machine_line(),
        "",
        f"`scripts/demo` on a fresh clone of {commit.stdout.strip()} (a new `.venv`, `pip install -e .` and the",
        'model files, `cg index examples/shop`, `cg explain "payment retry"`), output captured; the pip',
        f"cache the cold run filled holds {pip_mb} MB"
        + (
            " (pip also had a local wheel folder, PIP_FIND_LINKS, so the cold run downloaded little)."
            if os.environ.get("PIP_FIND_LINKS")
            else "."
        )
        + f" Goal: warm under {GOAL_WARM_SECONDS} s.",
        "",
        "| run | seconds | .venv MB | 1-min load before / after | first line of its output (cg index) |",
        "|---|---|---|---|---|",
    ]
    for label, run in runs.items():
        before, after = run["load"]
        first = run["first"].replace("|", "\\|")[:80]
        lines.append(f"| {label} | {run['seconds']:.0f} | {run['venv']} | {before:.1f} / {after:.1f} | {first} |")
    publish("First run: scripts/demo cold and warm (benchmarks/demo_time.py)", lines)


if __name__ == "__main__":
    main()
