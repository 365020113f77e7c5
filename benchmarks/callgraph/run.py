"""Precision and recall of `cg callgraph` on the hand-written cases in cases/<category>/<case>/, per
category and overall, for the jedi resolver and for the name resolver alone (the baseline), in the
same run. Edges are compared between definitions of the case only (keys of callgraph.json);
externals are not part of the truth, and class bodies (not nodes in the truth) are not scored.

    python benchmarks/callgraph/run.py [--workers N]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from results import machine_line, write_section  # noqa: E402

from cg.config import load_settings  # noqa: E402
from cg.ingest.callgraph import build_callgraph  # noqa: E402


def edges(graph: dict[str, list[str]], nodes: set[str]) -> set[tuple[str, str]]:
    return {(src, dst) for src, dsts in graph.items() if src in nodes for dst in dsts if dst in nodes}


def score(tp: int, fp: int, fn: int) -> tuple[float, float]:
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return precision, recall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    cases = sorted(p.parent for p in (HERE / "cases").glob("*/*/callgraph.json"))
    totals: dict[str, dict[str, list[int]]] = {r: defaultdict(lambda: [0, 0, 0]) for r in ("jedi", "name")}
    misses: dict[str, list[str]] = {"jedi": [], "name": []}
    seconds = {"jedi": 0.0, "name": 0.0}
    for case in cases:
        truth = json.loads((case / "callgraph.json").read_text())
        nodes = set(truth)
        expected = edges(truth, nodes)
        for resolver in ("jedi", "name"):
            started = time.perf_counter()
            got = edges(build_callgraph(load_settings(case, resolver=resolver, jedi_workers=args.workers)), nodes)
            seconds[resolver] += time.perf_counter() - started
            tp, fp, fn = len(got & expected), len(got - expected), len(expected - got)
            for key in (case.parent.name, "overall"):
                counts = totals[resolver][key]
                counts[0] += tp
                counts[1] += fp
                counts[2] += fn
            name = f"{case.parent.name}/{case.name}"
            misses[resolver] += [f"{name}: wrong {a} -> {b}" for a, b in sorted(got - expected)]
            misses[resolver] += [f"{name}: missed {a} -> {b}" for a, b in sorted(expected - got)]
        print(f"{case.parent.name}/{case.name}", flush=True)

    categories = sorted(k for k in totals["jedi"] if k != "overall") + ["overall"]
    lines = [
        machine_line(),
        "",
        f"{len(cases)} hand-written cases in {len(categories) - 1} categories (benchmarks/callgraph/README.md has the",
        "conventions). `jedi` = cg's default resolver; `name` = the tree-sitter name resolver alone (baseline).",
        "For reference, the PyCG paper reports 99.2% precision and 69.9% recall on its own micro-benchmark.",
        "",
        "| category | true edges | jedi precision | jedi recall | name precision | name recall |",
        "|---|---|---|---|---|---|",
    ]
    for category in categories:
        jp, jr = score(*totals["jedi"][category])
        np_, nr = score(*totals["name"][category])
        true_edges = totals["jedi"][category][0] + totals["jedi"][category][2]
        label = f"**{category}**" if category == "overall" else category
        lines.append(f"| {label} | {true_edges} | {jp:.3f} | {jr:.3f} | {np_:.3f} | {nr:.3f} |")
    lines += [
        "",
        f"Time for all cases: jedi {seconds['jedi']:.0f} s ({args.workers} worker per case),"
        f" name {seconds['name']:.1f} s.",
        "",
        f"Where jedi's graph differs from the truth ({len(misses['jedi'])} edges):",
        "",
    ]
    lines += [f"- {m}" for m in misses["jedi"]] or ["- none"]
    write_section("Call-graph micro-benchmark (benchmarks/callgraph/run.py)", "\n".join(lines))
    jp, jr = score(*totals["jedi"]["overall"])
    print(f"jedi: precision {jp:.3f} recall {jr:.3f}")


if __name__ == "__main__":
    main()
