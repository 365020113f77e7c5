"""Write throughput of both backends on the same real project (a PyPI sdist: requests, or Django).

Each run indexes the project into a fresh store and only the write stage is timed: nodes (files,
symbols, externals) and edges per second. On Kùzu a full run into an empty store is measured both
ways, interleaved over the rounds: statement by statement (``KuzuStore.bulk_rows = 0``) and loaded in
bulk (cg/graph/kuzu_bulk.py, the default); on Neo4j likewise, file by file and batched across files
(``Neo4jStore.bulk_rows``). (A second run of the same content measures no writing:
it finds nothing changed.) Neo4j is the server of scripts/neo4j/neo4j-server (started on
CG_NEO4J_PORT if it is not already answering, and stopped again afterwards; default port 7697, as
scripts/test), into an empty database. requests embeds its texts in the run (from the cache after the first);
Django's 80k texts are left for later (``embed later``: the write of the graph without vectors,
what decides how soon it can be queried).

    python benchmarks/write_throughput.py                                    # requests, 3 rounds
    python benchmarks/write_throughput.py --project django --rounds 1 --no-neo4j
    python benchmarks/write_throughput.py --project django --rounds 1 --no-kuzu   # its own section
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from ingest import fetch_sdist  # noqa: E402
from results import machine_line, write_section  # noqa: E402

from cg.config import load_settings  # noqa: E402
from cg.embed import embedder_for  # noqa: E402
from cg.graph.kuzu_store import KuzuStore  # noqa: E402
from cg.graph.neo4j_store import Neo4jStore  # noqa: E402
from cg.ingest.pipeline import index_repository  # noqa: E402

PORT = os.environ.get("CG_NEO4J_PORT", "7697")  # the port scripts/test uses
PASSWORD = os.environ.get("NEO4J_PASSWORD", "cgtestpass")


def neo4j_server(action: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CG_NEO4J_PORT": PORT, "NEO4J_PASSWORD": PASSWORD, "PYTHON": sys.executable}
    return subprocess.run(
        [str(ROOT / "scripts" / "neo4j" / "neo4j-server"), action], env=env, text=True, capture_output=True
    )


NEO4J_BULK = Neo4jStore.bulk_rows
PROJECTS = {"requests": ("requests", "2.32.3", "now"), "django": ("Django", "5.1.4", "later")}


def measure(settings, store, embedder, embed: str) -> dict:
    summary = index_repository(settings, store, embedder, embed_mode=embed)
    nodes = summary.files + summary.symbols + store.stats()["External"]
    edges = sum(summary.edges.values())
    seconds = summary.seconds["write"]
    return {"nodes": nodes, "edges": edges, "seconds": seconds}


def kuzu_round(settings, embedder, work: Path, bulk_rows: int, embed: str) -> dict:
    """One full run into a fresh Kùzu store with ``bulk_rows`` (0: by statement)."""
    path = work / f"graph-{bulk_rows}.kuzu"
    shutil.rmtree(path, ignore_errors=True)
    path.unlink(missing_ok=True)
    store = KuzuStore(path)
    store.bulk_rows = bulk_rows
    try:
        return measure(settings, store, embedder, embed)
    finally:
        store.close()
        shutil.rmtree(path, ignore_errors=True)
        path.unlink(missing_ok=True)
        Path(f"{path}.wal").unlink(missing_ok=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", default="requests", choices=sorted(PROJECTS))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-neo4j", action="store_true", help="Kùzu only")
    parser.add_argument("--no-kuzu", action="store_true", help="Neo4j only")
    args = parser.parse_args()
    name, version, embed = PROJECTS[args.project]
    source = fetch_sdist(name, version)
    work = Path(tempfile.mkdtemp(prefix="cg-write-"))
    neo4j = not args.no_neo4j
    started_here = neo4j and neo4j_server("status").returncode != 0
    load_start = os.getloadavg()
    try:
        if started_here:
            result = neo4j_server("start")
            if result.returncode != 0:
                raise SystemExit(f"could not start Neo4j: {result.stdout}{result.stderr}")
        repo = work / "repo"
        shutil.copytree(source, repo)
        kuzu_settings = load_settings(repo, history_commits=0, resolver="name")
        embedder = embedder_for(kuzu_settings)
        runs: dict[tuple[str, str], list[dict]] = {}
        for round_no in range(0 if args.no_kuzu else args.rounds):
            for label, bulk_rows in (("empty store, by statement", 0), ("empty store, bulk load", KuzuStore.bulk_rows)):
                first = kuzu_round(kuzu_settings, embedder, work, bulk_rows, embed)
                runs.setdefault(("kuzu", label), []).append(first)
                print(f"round {round_no + 1} kuzu {label}: write {first['seconds']:.1f} s", flush=True)
        if neo4j:
            settings = load_settings(
                repo,
                backend="neo4j",
                neo4j_uri=f"bolt://127.0.0.1:{PORT}",
                neo4j_password=PASSWORD,
                history_commits=0,
                resolver="name",
            )
            store = Neo4jStore(settings)
            try:
                for round_no in range(args.rounds):
                    for label, bulk_rows in (("empty store, file by file", 0), ("empty store, batched", NEO4J_BULK)):
                        store.reset()
                        store.bulk_rows = bulk_rows
                        first = measure(settings, store, embedder, embed)
                        runs.setdefault(("neo4j", label), []).append(first)
                        print(f"round {round_no + 1} neo4j {label}: write {first['seconds']:.1f} s", flush=True)
            finally:
                store.reset()
                store.close()
    finally:
        if started_here:
            neo4j_server("stop")
        shutil.rmtree(work, ignore_errors=True)
    load_end = os.getloadavg()
    lines = [
        machine_line(),
        "",
        f"`python benchmarks/write_throughput.py --project {args.project} --rounds {args.rounds}"
        f"{' --no-neo4j' if args.no_neo4j else ''}{' --no-kuzu' if args.no_kuzu else ''}`:"
        f" {name} {version} (PyPI sdist), the name resolver, no history;"
        " the write stage"
        " of a full `cg index` only (parse, resolve and embed excluded), vectors"
        f" {'written with the nodes' if embed == 'now' else 'left for later'}. Kùzu: embedded, on local disk,"
        " one database file written in place (no generations, so no compaction rewrite on either side), by"
        " statement and in bulk interleaved over the rounds (medians). Neo4j: 5.26 Community over Bolt on"
        " 127.0.0.1 (scripts/neo4j), the whole run in one transaction, edges in UNWIND batches; each file's"
        " nodes written by its own statements (file by file, `Neo4jStore.bulk_rows = 0`) or gathered across"
        " files into UNWIND batches (batched, the default), interleaved over the rounds. Nodes and"
        " edges are written in one stage, so the rate counts both together.",
        f"Load average (1, 5, 15 min) at the start {', '.join(f'{x:.1f}' for x in load_start)}, at the end"
        f" {', '.join(f'{x:.1f}' for x in load_end)}, on {os.cpu_count()} cores.",
        "",
        "| backend | run | rounds | nodes | edges | write s | (nodes + edges)/s |",
        "|---|---|---|---|---|---|---|",
    ]
    for (backend, label), rs in runs.items():
        seconds = statistics.median(r["seconds"] for r in rs)
        r = rs[-1]
        lines.append(
            f"| {backend} | {label} | {len(rs)} | {r['nodes']} | {r['edges']} | {seconds:.2f} "
            f"| {(r['nodes'] + r['edges']) / seconds:.0f} |"
        )
    title = "Write throughput (benchmarks/write_throughput.py)"  # requests' section, as before
    if args.project != "requests":
        title = f"Write throughput: {name} (benchmarks/write_throughput.py)"
        if args.no_kuzu:
            title = f"Write throughput: {name} on Neo4j (benchmarks/write_throughput.py)"
    write_section(title, "\n".join(lines))


if __name__ == "__main__":
    started = time.perf_counter()
    main()
    print(f"done in {time.perf_counter() - started:.0f}s")
