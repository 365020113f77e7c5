"""Write throughput of both backends on the same real project (requests, the ingest benchmark's sdist).

The project is parsed, resolved and embedded once (embeddings from the cache after the first run);
then the same records are written into a fresh Kùzu store and into a fresh Neo4j database, and
only the write stage is timed: nodes (files, symbols, externals) and edges per second.
Neo4j is the server of scripts/neo4j/neo4j-server (started on CG_NEO4J_PORT if it
is not already answering, and stopped again afterwards). Default port 7697, as scripts/test.

    python benchmarks/write_throughput.py
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
from ingest import fetch_sdist  # noqa: E402
from results import machine_line, write_section  # noqa: E402

from cg.config import load_settings  # noqa: E402
from cg.embed import embedder_for  # noqa: E402
from cg.graph.kuzu_store import KuzuStore  # noqa: E402
from cg.ingest.pipeline import index_repository  # noqa: E402

PORT = os.environ.get("CG_NEO4J_PORT", "7697")  # the port scripts/test uses
PASSWORD = os.environ.get("NEO4J_PASSWORD", "cgtestpass")


def neo4j_server(action: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CG_NEO4J_PORT": PORT, "NEO4J_PASSWORD": PASSWORD, "PYTHON": sys.executable}
    return subprocess.run(
        [str(ROOT / "scripts" / "neo4j" / "neo4j-server"), action], env=env, text=True, capture_output=True
    )


def measure(settings, store, embedder) -> dict:
    summary = index_repository(settings, store, embedder)
    nodes = summary.files + summary.symbols + store.stats()["External"]
    edges = sum(summary.edges.values())
    seconds = summary.seconds["write"]
    return {"nodes": nodes, "edges": edges, "seconds": seconds}


def main() -> None:
    source = fetch_sdist("requests", "2.32.3")
    work = Path(tempfile.mkdtemp(prefix="cg-write-"))
    started_here = neo4j_server("status").returncode != 0
    try:
        if started_here:
            result = neo4j_server("start")
            if result.returncode != 0:
                raise SystemExit(f"could not start Neo4j: {result.stdout}{result.stderr}")
        repo = work / "repo"
        shutil.copytree(source, repo)
        rows = []
        kuzu_settings = load_settings(repo)
        embedder = embedder_for(kuzu_settings)
        for backend in ("kuzu", "neo4j"):
            if backend == "kuzu":
                store = KuzuStore(work / "graph.kuzu")
                settings = kuzu_settings
            else:
                from cg.graph.neo4j_store import Neo4jStore

                settings = load_settings(
                    repo, backend="neo4j", neo4j_uri=f"bolt://127.0.0.1:{PORT}", neo4j_password=PASSWORD
                )
                store = Neo4jStore(settings)
                store.reset()
            try:
                first = measure(settings, store, embedder)  # into an empty store
                again = measure(settings, store, embedder)  # the same content again: upserts
            finally:
                store.close()
            rows.append((backend, "empty store", first))
            rows.append((backend, "re-index (upsert)", again))
            print(backend, first, again, flush=True)
    finally:
        if started_here:
            neo4j_server("stop")
        shutil.rmtree(work, ignore_errors=True)
    lines = [
        machine_line(),
        "",
        "requests 2.32.3 (PyPI sdist); the write stage of `cg index` only (parse, resolve and embed excluded).",
        "Kùzu: embedded, on local disk. Neo4j: 5.26 Community over Bolt on 127.0.0.1 (scripts/neo4j), one",
        "managed transaction per file, edges in UNWIND batches of 5,000. Nodes and edges are written in one",
        "stage, so the rate counts both together.",
        "",
        "| backend | run | nodes | edges | write s | (nodes + edges)/s |",
        "|---|---|---|---|---|---|",
    ]
    for backend, label, r in rows:
        lines.append(
            f"| {backend} | {label} | {r['nodes']} | {r['edges']} | {r['seconds']:.2f} "
            f"| {(r['nodes'] + r['edges']) / r['seconds']:.0f} |"
        )
    write_section("Write throughput (benchmarks/write_throughput.py)", "\n".join(lines))


if __name__ == "__main__":
    started = time.perf_counter()
    main()
    print(f"done in {time.perf_counter() - started:.0f}s")
