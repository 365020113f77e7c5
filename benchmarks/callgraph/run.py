"""Precision and recall of `cg callgraph` on the hand-written cases in cases/<category>/<case>/, per
category and overall, for the jedi resolver and for the name resolver alone (the baseline), in the same
run. In-case edges (callee defined in the case) and external edges (`<builtin>.len`, `json.dumps`) are
scored apart, so the in-case numbers stay comparable with earlier runs and with other tools that name
externals differently. A class body is a caller of its own, named by the class (README, rule 1): calls a
tool reports under the class's name are scored as they are.

    python benchmarks/callgraph/run.py [--workers N] [--no-write] [--only CATEGORY_OR_CASE ...]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from results import machine_line, write_section  # noqa: E402
from validate_cases import top_level_modules  # noqa: E402

from cg.config import load_settings  # noqa: E402
from cg.ingest.callgraph import build_callgraph  # noqa: E402

RESOLVERS = ("jedi", "name")
KINDS = ("in-case", "external")
Edge = tuple[str, str]


def split_edges(graph: dict[str, list[str]], nodes: set[str], own: set[str]) -> dict[str, set[Edge]]:
    """The graph's edges from case definitions, as in-case (callee is a definition) and external ones."""
    result: dict[str, set[Edge]] = {kind: set() for kind in KINDS}
    for caller, callees in graph.items():
        if caller not in nodes:
            continue
        for callee in callees:
            if callee in nodes:
                result["in-case"].add((caller, callee))
            elif callee.split(".")[0] not in own:
                result["external"].add((caller, callee))
    return result


def score(counts: list[int]) -> tuple[float, float]:
    tp, fp, fn = counts
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return precision, recall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--no-write", action="store_true", help="print the numbers, leave RESULTS.md alone")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="categories or category/case names; no RESULTS.md")
    args = parser.parse_args()
    cases = sorted(p.parent for p in (HERE / "cases").glob("*/*/callgraph.json"))
    if args.only:
        cases = [c for c in cases if c.parent.name in args.only or f"{c.parent.name}/{c.name}" in args.only]
        args.no_write = True  # RESULTS.md only ever shows a run over every case
    # totals[resolver][kind][category] = [true positives, false positives, false negatives]
    totals: dict[str, dict[str, defaultdict[str, list[int]]]] = {
        r: {k: defaultdict(lambda: [0, 0, 0]) for k in KINDS} for r in RESOLVERS
    }
    misses: dict[str, list[str]] = {r: [] for r in RESOLVERS}
    external_misses: dict[str, Counter[str]] = {r: Counter() for r in RESOLVERS}
    seconds = dict.fromkeys(RESOLVERS, 0.0)
    for case in cases:
        truth_graph = json.loads((case / "callgraph.json").read_text())
        nodes = set(truth_graph)
        own = top_level_modules(str(case))
        truth = split_edges(truth_graph, nodes, own)
        name = f"{case.parent.name}/{case.name}"
        for resolver in RESOLVERS:
            started = time.perf_counter()
            graph = build_callgraph(load_settings(case, resolver=resolver, jedi_workers=args.workers))
            seconds[resolver] += time.perf_counter() - started
            got = split_edges(graph, nodes, own)
            for kind in KINDS:
                tp, fp, fn = got[kind] & truth[kind], got[kind] - truth[kind], truth[kind] - got[kind]
                for key in (case.parent.name, "overall"):
                    counts = totals[resolver][kind][key]
                    counts[0] += len(tp)
                    counts[1] += len(fp)
                    counts[2] += len(fn)
                if kind == "in-case":
                    misses[resolver] += [f"{name}: wrong {a} -> {b}" for a, b in sorted(fp)]
                    misses[resolver] += [f"{name}: missed {a} -> {b}" for a, b in sorted(fn)]
                else:
                    external_misses[resolver].update(f"wrong `{b}`" for _, b in fp)
                    external_misses[resolver].update(f"missed `{b}`" for _, b in fn)
        print(name, flush=True)

    categories = sorted(k for k in totals["jedi"]["in-case"] if k != "overall") + ["overall"]
    lines = [
        machine_line(),
        "",
        f"{len(cases)} hand-written cases in {len(categories) - 1} categories (benchmarks/callgraph/README.md has the",
        "conventions, those of the PyCG micro-benchmark). `jedi` = cg's default resolver; `name` = the tree-sitter",
        "name resolver alone (baseline). In-case edges end at a definition of the case; external edges end at a",
        "builtin (`<builtin>.len`) or at an import path outside the case (`json.dumps`). P = precision, R = recall.",
        "",
        "| category | in-case edges | jedi P | jedi R | name P | name R"
        " | external edges | jedi P | jedi R | name P | name R |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for category in categories:
        cells = [f"**{category}**" if category == "overall" else category]
        for kind in KINDS:
            counts = totals["jedi"][kind][category]
            cells.append(str(counts[0] + counts[2]))
            for resolver in RESOLVERS:
                precision, recall = score(totals[resolver][kind][category])
                cells += [f"{precision:.3f}", f"{recall:.3f}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        f"Time for all cases: jedi {seconds['jedi']:.0f} s ({args.workers} worker per case),"
        f" name {seconds['name']:.1f} s.",
        "",
        f"Where jedi's in-case edges differ from the truth ({len(misses['jedi'])} edges):",
        "",
    ]
    lines += [f"- {m}" for m in misses["jedi"]] or ["- none"]
    common = external_misses["jedi"].most_common(20)
    lines += ["", f"jedi's most frequent external differences (of {sum(external_misses['jedi'].values())}):", ""]
    lines += [f"- {what} ({count}x)" for what, count in common] or ["- none"]
    for resolver in RESOLVERS:
        for kind in KINDS:
            precision, recall = score(totals[resolver][kind]["overall"])
            print(f"{resolver} {kind}: precision {precision:.3f} recall {recall:.3f}")
    if not args.no_write:
        write_section("Call-graph micro-benchmark (benchmarks/callgraph/run.py)", "\n".join(lines))
    else:
        print("\n".join(lines))


if __name__ == "__main__":
    main()
