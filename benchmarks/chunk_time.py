"""What the chunk stage costs: ``chunk_file`` over every file of a project with the model's own token
counter, this checkout against a baseline commit, side by side in one run, with proof that both
sides cut the very same units.

The chunk stage is where an index run cuts each file into what it embeds and what the full-text
index holds (cg/ingest/chunk.py); Django's took 38 of the 113 s to a queryable graph
(benchmarks/scale.py), and ``fill_vectors`` cuts every file again to rebuild the texts it embeds.
Each side runs in its own interpreter from the same virtualenv (the baseline's ``cg`` unpacked with
`git archive`, benchmarks/safeguards.py's ``unpack``), interleaved (baseline, current, ...). A run
parses the project (not timed), then times ``chunk_file`` over every file, and hashes what it
returned: every symbol's header, search text and literals, every embedded text, every chunk's id,
lines, text and search text. A side whose ``chunk_file`` takes ``lexical`` is also timed without the
lexical texts (what ``fill_vectors`` asks for), hashed over what is embedded only. The sdists are
benchmarks/scale.py's.

    python benchmarks/chunk_time.py [--baseline REF] [--rounds N] [--projects requests,django]
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

from ingest import fetch_sdist  # noqa: E402
from results import machine_line, model_line, write_section  # noqa: E402
from safeguards import unpack  # noqa: E402
from scale import PROJECTS  # noqa: E402

BASELINE = "fabe9b3"  # main before the token counter's memo and lower bound, and chunk_file(lexical=False)

# Runs in a fresh interpreter whose `cg` is one side's: parses the tree, then times the chunking.
PROBE = """
import hashlib, inspect, json, os, sys, time
from pathlib import Path
from cg.config import load_settings
from cg.embed import embedder_for
from cg.ingest.chunk import chunk_file
from cg.ingest.pipeline import IndexSummary, extract_repository

tree = Path(sys.argv[1])
settings = load_settings(tree, resolver="name", history_commits=0)
extractions, _ = extract_repository(settings, summary=IndexSummary(repo=str(tree), backend="none"))
counter = embedder_for(settings).token_counter()
counter(["def warm(): ..."])


def digest(units, lexical):
    h = hashlib.sha256()
    for u in units:
        for s in u.symbols:
            h.update(repr((s.id, s.header, s.search_text, s.literals) if lexical else (s.id, s.header)).encode())
        for t in u.embed_texts:
            h.update(t.encode())
        for c in u.chunks:
            h.update(repr((c.id, c.start_line, c.end_line, c.text) + ((c.search_text,) if lexical else ())).encode())
        h.update(str(u.dropped).encode())
    return h.hexdigest()[:16]


def timed(**extra):
    load = os.getloadavg()[0]
    started, cpu = time.perf_counter(), time.process_time()
    units = [chunk_file(ex, settings.chunk_tokens, counter, settings.max_chunks_per_file, **extra)
             for ex in extractions]
    return units, time.perf_counter() - started, time.process_time() - cpu, load


units, wall, cpu, load = timed()
out = {"files": len(extractions), "loc": sum(ex.file.loc for ex in extractions), "wall": wall, "cpu": cpu,
       "load": load, "digest": digest(units, True), "embed_digest": digest(units, False)}
del units
if "lexical" in inspect.signature(chunk_file).parameters:
    units, wall, cpu, _ = timed(lexical=False)
    out.update(bare_wall=wall, bare_cpu=cpu, bare_digest=digest(units, False))
print(json.dumps(out))
"""


def measure(code: Path, tree: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tree)], cwd=code, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"chunk_time: the probe failed in {code}: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=BASELINE, help="the commit to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--projects", default="requests,django")
    args = parser.parse_args()
    load_start = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory(prefix="cg-chunk-time-") as tmp:
        sides = {"baseline": unpack(args.baseline, Path(tmp) / "baseline"), "current": HERE.parent}
        for project in args.projects.split(","):
            name, version = PROJECTS[project]
            tree = fetch_sdist(name, version)
            runs: dict[str, list[dict]] = {side: [] for side in sides}
            for _ in range(args.rounds):
                for side, code in sides.items():
                    runs[side].append(measure(code, tree))
                    print(project, side, runs[side][-1], flush=True)
            rows.append((f"{name} {version}", runs))
    load_end = os.getloadavg()
    lines = [
        machine_line(),
        f"Model (its tokenizer counts the tokens): {model_line()}.",
        "",
        f"`chunk_file` over every file with the model's token counter (resolver `name`), baseline `{args.baseline}`"
        f" against this checkout, each in its own interpreter, interleaved, {args.rounds} rounds each; medians,"
        " wall seconds (CPU seconds alike: one thread). *Same units*: the hash of every header, search text,"
        " literal, embedded text and chunk is the baseline's. *Embedded only*: this checkout's"
        " `chunk_file(lexical=False)`, as `fill_vectors` runs it, and whether what it embeds hashes as the"
        " baseline's full run does.",
        f"Load average (1, 5, 15 min) at the start {', '.join(f'{x:.1f}' for x in load_start)},"
        f" at the end {', '.join(f'{x:.1f}' for x in load_end)}, on {os.cpu_count()} cores.",
        "",
        "| project | files | LOC | baseline s | current s | current / baseline | same units "
        "| embedded only s | embedded only / baseline | same embedded texts | baseline runs | current runs |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, runs in rows:
        base, cur = runs["baseline"], runs["current"]
        b, c = statistics.median(r["wall"] for r in base), statistics.median(r["wall"] for r in cur)
        same = all(r["digest"] == base[0]["digest"] for r in base + cur)
        bare = [r["bare_wall"] for r in cur if "bare_wall" in r]
        bare_s = f"{statistics.median(bare):.1f}" if bare else "-"
        bare_ratio = f"{statistics.median(bare) / b:.2f}" if bare else "-"
        same_embedded = all(r.get("bare_digest") == base[0]["embed_digest"] for r in cur) if bare else False
        base_runs = ", ".join(format(r["wall"], ".1f") for r in base)
        cur_runs = ", ".join(format(r["wall"], ".1f") for r in cur)
        lines.append(
            f"| {label} | {cur[0]['files']} | {cur[0]['loc']} | {b:.1f} | {c:.1f} | {c / b:.2f} "
            f"| {'yes' if same else 'NO'} "
            f"| {bare_s} | {bare_ratio} | {'yes' if same_embedded else 'NO'} | {base_runs} | {cur_runs} |"
        )
    write_section("Chunk stage: this checkout against a baseline (benchmarks/chunk_time.py)", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
