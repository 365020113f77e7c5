"""Call resolution on real projects (the ingest benchmark's pinned PyPI sdists): the share of call
edges that land on a definition in the repository or on a named library target, with the name
resolver alone (the baseline) and with jedi, and jedi's time per 1,000 lines for 1 and N workers.

    python benchmarks/resolution.py
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from ingest import PROJECTS, fetch_sdist  # noqa: E402
from results import machine_line, write_section  # noqa: E402

from cg.config import load_settings  # noqa: E402
from cg.ingest.pipeline import IndexSummary, extract_repository, resolve_extractions  # noqa: E402


def run(repo: Path, resolver: str, workers: int) -> dict:
    settings = load_settings(repo, resolver=resolver, jedi_workers=workers)
    summary = IndexSummary(repo=str(repo), backend="none")
    extractions, _ = extract_repository(settings, summary=summary)
    started = time.perf_counter()
    edges, _ = resolve_extractions(settings, extractions, summary=summary)
    seconds = time.perf_counter() - started
    calls = [e for e in edges if e.type == "CALLS"]
    in_repo = sum(e.dst_label == "Symbol" for e in calls)
    external = sum(e.dst_label == "External" and e.resolved_by != "unresolved" for e in calls)
    loc = sum(ex.file.loc for ex in extractions)
    return {
        "loc": loc,
        "edges": len(calls),
        "in_repo": in_repo / len(calls),
        "external": external / len(calls),
        "resolved": (in_repo + external) / len(calls),
        "seconds": seconds,
        "sites": summary.jedi_sites,
        "answered": summary.jedi_answered,
        "timed_out": len(summary.jedi_timed_out),
        "workers": summary.jedi_workers,
    }


def main() -> None:
    cores = os.cpu_count() or 1
    lines = [
        machine_line(),
        "",
        "Share of CALLS edges (one per caller/callee pair) resolved to a definition in the repository or to a",
        "named library/builtin target; the rest are unresolved expressions. `name` = tree-sitter scopes, imports",
        "and stated types only (the baseline, no jedi); `jedi` = jedi first, names as the fallback.",
        "",
        "| project | LOC | resolver | workers | call edges | in repo | named external | resolved | seconds "
        "| s per 1k LOC | jedi sites answered | files over budget |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, version in PROJECTS:
        repo = fetch_sdist(name, version)
        configs = [("name", 0), ("jedi", 1)] + ([("jedi", cores)] if cores > 1 else [])
        for resolver, workers in configs:
            r = run(repo, resolver, workers)
            answered = f"{r['answered']}/{r['sites']}" if resolver == "jedi" else "-"
            lines.append(
                f"| {name} {version} | {r['loc']} | {resolver} | {r['workers'] or '-'} | {r['edges']} "
                f"| {r['in_repo']:.1%} | {r['external']:.1%} | {r['resolved']:.1%} | {r['seconds']:.1f} "
                f"| {r['seconds'] / r['loc'] * 1000:.2f} | {answered} "
                f"| {r['timed_out'] if resolver == 'jedi' else '-'} |"
            )
            print(lines[-1], flush=True)
    write_section("Call resolution on real projects (benchmarks/resolution.py)", "\n".join(lines))


if __name__ == "__main__":
    main()
