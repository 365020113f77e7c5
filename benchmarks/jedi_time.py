"""What the resolver's new rules cost: jedi resolve time per 1,000 lines, this checkout against a
baseline commit, side by side in one run.

The baseline's ``cg`` package is unpacked with `git archive` (benchmarks/safeguards.py's ``unpack``)
and both sides run in their own processes from the same virtualenv, interleaved (baseline, current,
baseline, current, ...), on the sdists benchmarks/executed_edges.py already fetched (flask, sqlparse,
more-itertools; run that script first). A run extracts the project, then times `resolve_extractions`
with the jedi resolver (per-file budget 300 s, so load never turns a slow file into a name fallback);
the reported figure is the median per side, with the sites jedi was asked and the load average.

    python benchmarks/jedi_time.py [--baseline REF] [--rounds N]   # writes the "jedi time" section
    python benchmarks/jedi_time.py --django   # this checkout alone on Django 5.1.4, default settings

``--django`` answers issue 19's "with defaults, jedi had done 49 of 2,789 files after 12 minutes":
the jedi stage of this checkout on Django with the settings a user gets (one worker per core, 30 s per
file), once, with the files that ran over their budget and the process's peak RSS (the workers' own
memory is not in it). The baseline is not run there: at its pace it would take hours. The sdist is the
one benchmarks/scale.py fetches.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from executed_edges import PROJECTS  # noqa: E402
from results import machine_line, write_section  # noqa: E402
from safeguards import unpack  # noqa: E402

BASELINE = "9465664"  # main before issue 15's resolver rules (decorators, lambdas, implicit calls, dispatch)
DATA = HERE / "data"

# Runs in a fresh interpreter whose `cg` is one side's, with the settings given as JSON: prints the
# resolve time, the sites, the LOC and what jedi left out (fields an older `cg` lacks count as 0).
PROBE = """
import json, os, resource, sys, time
from pathlib import Path
from cg.config import load_settings
from cg.ingest.pipeline import extract_repository, resolve_extractions
from cg.ingest.pipeline import IndexSummary

tree = Path(sys.argv[1])
settings = load_settings(tree, resolver="jedi", **json.loads(sys.argv[2]))
summary = IndexSummary(repo=str(tree), backend="none")
extractions, _ = extract_repository(settings, summary=summary)
extractions = [ex for ex in extractions if ex.file.kind != "config"]
load = os.getloadavg()[0]
started = time.perf_counter()
resolve_extractions(settings, extractions, summary=summary)
seconds = time.perf_counter() - started
python = [ex for ex in extractions if ex.file.language == "python"]
print(json.dumps({"seconds": seconds, "loc": sum(ex.file.loc for ex in python), "files": len(python),
    "sites": summary.jedi_sites, "answered": getattr(summary, "jedi_answered", 0),
    "workers": getattr(summary, "jedi_workers", 0), "timed_out": len(getattr(summary, "jedi_timed_out", [])),
    "failed": len(getattr(summary, "jedi_failed", [])), "budget": settings.jedi_budget, "load": load,
    "load_after": os.getloadavg()[0], "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}))
"""
BENCH = {"jedi_budget": 300.0}  # the comparison: no file turned into a name fallback by load
DEFAULTS = {"history_commits": 0}  # a user's jedi settings (workers and budget as configured by default)


def measure(code: Path, tree: Path, settings: dict | None = None) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tree), json.dumps(BENCH if settings is None else settings)],
        cwd=code,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"jedi_time: the probe failed in {code}: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=BASELINE, help="the commit to compare with")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--django", action="store_true", help="this checkout alone on Django, default settings")
    args = parser.parse_args()
    if args.django:
        django_main()
        return
    trees = [(p.name, DATA / f"{p.name}-{p.version}") for p in PROJECTS]
    missing = [str(tree) for _, tree in trees if not tree.is_dir()]
    if missing:
        raise SystemExit(f"jedi_time: run benchmarks/executed_edges.py first (missing {', '.join(missing)})")
    rows = []
    with tempfile.TemporaryDirectory(prefix="cg-jedi-time-") as tmp:
        sides = {"baseline": unpack(args.baseline, Path(tmp) / "baseline"), "current": HERE.parent}
        for name, tree in trees:
            runs: dict[str, list[dict]] = {side: [] for side in sides}
            for _ in range(args.rounds):
                for side, code in sides.items():
                    runs[side].append(measure(code, tree))
                    print(name, side, runs[side][-1], flush=True)
            rows.append((name, runs))
    lines = [
        machine_line(),
        "",
        f"`resolve_extractions` with jedi (2 workers, budget 300 s per file), baseline `{args.baseline}` against "
        f"this checkout, interleaved, {args.rounds} rounds each, median; sites = call sites jedi was asked.",
        "",
        "| project | Python LOC | baseline s per 1k LOC | current s per 1k LOC | current / baseline "
        "| baseline sites | current sites | load during the runs |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, runs in rows:
        loc = runs["current"][0]["loc"]
        base = statistics.median(r["seconds"] for r in runs["baseline"]) * 1000 / loc
        cur = statistics.median(r["seconds"] for r in runs["current"]) * 1000 / loc
        loads = [r["load"] for side in runs.values() for r in side]
        lines.append(
            f"| {name} | {loc} | {base:.2f} | {cur:.2f} | {cur / base:.2f} | {runs['baseline'][0]['sites']} "
            f"| {runs['current'][0]['sites']} | {min(loads):.1f}-{max(loads):.1f} |"
        )
    write_section("jedi time per 1k LOC, before and after issue 15 (benchmarks/jedi_time.py)", "\n".join(lines))
    print("\n".join(lines))


def django_main() -> None:
    from ingest import fetch_sdist
    from scale import PROJECTS as SCALE_PROJECTS

    name, version = SCALE_PROJECTS["django"]
    tree = fetch_sdist(name, version)
    r = measure(HERE.parent, tree, DEFAULTS)
    lines = [
        machine_line(),
        "",
        f"`resolve_extractions` of this checkout on Django {version} with the default jedi settings "
        f"({r['workers']} workers, {r['budget']:.0f} s per file), once; peak RSS of the calling process (the "
        "workers' memory is not in it); 1-minute load average before and after.",
        "",
        "| project | Python files | Python LOC | jedi s | s per 1k LOC | sites | answered | files over budget "
        "| files failed | peak RSS MB | load before / after |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        f"| Django {version} | {r['files']} | {r['loc']} | {r['seconds']:.0f} | {r['seconds'] * 1000 / r['loc']:.2f} "
        f"| {r['sites']} | {r['answered']} | {r['timed_out']} | {r['failed']} | {r['peak_mb']} "
        f"| {r['load']:.1f} / {r['load_after']:.1f} |",
    ]
    write_section("jedi on Django with default settings (benchmarks/jedi_time.py --django)", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
