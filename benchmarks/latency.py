"""Answer latency in a warm process: ``explain``, ``impact`` and ``path`` on examples/shop and on
requests 2.32.3 (the ingest benchmark's sdist), on the embedded store and, when ``NEO4J_URI`` is set,
on Neo4j.

Each project is indexed once per backend (``cg index --rebuild`` in a child process, embeddings from
the shared cache). Then, in this process: the store is opened, the model is loaded and timed apart
("model load"), one warm-up round runs, and ``ROUNDS`` timed rounds follow. Every explain question is
embedded by the model on every round (the query-embedding cache is pointed at an empty file per
round), so explain includes real query inference, as for a question never asked before. Impact targets
and path pairs are not typed in here: they come from the graph, the seeds and flow of each question.

    python benchmarks/latency.py      # writes the "Answer latency" section of benchmarks/RESULTS.md

On Neo4j the sessions alternate between the Bolt codec cg installs (neo4j-rust-ext, in Rust) and the
driver's own Python one (``python_codec``), so the row without the extension is measured beside it.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from ingest import fetch_sdist  # noqa: E402
from results import machine_line, model_line, write_section  # noqa: E402

from cg.api import Index, open_index, quiet_model_loading  # noqa: E402
from cg.embed import EmbeddingCache  # noqa: E402

ROUNDS = 5
QUESTIONS = {
    "examples/shop": [
        "how is a failed payment retried?",
        "how is a stripe webhook signature verified?",
        "what happens when an invoice is paid?",
        "how are coupons validated?",
        "how does a subscription get cancelled?",
    ],
    "requests 2.32.3": [
        "how does a session send a request?",
        "how are redirects followed?",
        "how are cookies merged into a request?",
        "how is digest authentication computed?",
        "how are proxies chosen from the environment?",
    ],
}


def index(repo: Path, backend: str) -> None:
    env = {**os.environ, "CG_BACKEND": backend}
    cg = Path(sys.executable).parent / "cg"
    subprocess.run([str(cg), "index", str(repo), "--rebuild"], env=env, check=True, capture_output=True, text=True)


@contextmanager
def scratch_copy(source: Path, prefix: str) -> Iterator[Path]:
    """A copy of the project ``source`` (without an index of its own) in a temporary directory, removed after."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        repo = work / "repo"
        shutil.copytree(source, repo, ignore=shutil.ignore_patterns(".cg", "__pycache__"))
        yield repo
    finally:
        shutil.rmtree(work, ignore_errors=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def measure(repo: Path, backend: str, questions: list[str]) -> dict:
    scratch = Path(tempfile.mkdtemp(prefix="cg-latency-cache-"))
    try:
        with open_index(repo, backend) as index:
            return _measure(index, scratch, questions)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _measure(index: Index, scratch: Path, questions: list[str]) -> dict:
    """Model load, then explain, impact and path timed over the rounds, in one open session."""
    embedder = index.embedder
    embedder.cache = EmbeddingCache(scratch / "load.sqlite")
    started = time.perf_counter()
    embedder.embed(["warm up"])  # the model load (and one inference), timed on its own
    model_load = time.perf_counter() - started

    embedding_time = [0.0]
    embed = embedder.embed

    def timed_embed(texts, *args, **kwargs):  # the query's embedding, timed inside explain
        started = time.perf_counter()
        try:
            return embed(texts, *args, **kwargs)
        finally:
            embedding_time[0] += time.perf_counter() - started

    embedder.embed = timed_embed

    def ask(question: str):
        return index.explain(question)

    # targets from the graph: each question's first seed (impact) and its flow's first entry to
    # that seed (path)
    targets, pairs = [], []
    for question in questions:
        answer = ask(question)
        if answer.found:
            seed = answer.seeds[0].symbol
            targets.append(seed)
            entry = answer.nodes[answer.order[0]].node
            pairs.append((entry, seed))
    times: dict[str, list[float]] = {"explain": [], "impact": [], "path": [], "query embedding": []}
    answered, resident_at = len(questions), None  # the embedded store's graph in memory from which answer
    for round_no in range(ROUNDS + 1):
        embedder.cache = EmbeddingCache(scratch / f"round-{round_no}.sqlite")  # questions are new again
        for name, calls in (
            ("explain", [lambda q=q: ask(q) for q in questions]),
            ("impact", [lambda t=t: index.impact(t) for t in targets]),
            ("path", [lambda a=a, b=b: index.paths(a, b) for a, b in pairs]),
        ):
            for call in calls:
                embedding_time[0] = 0.0
                started = time.perf_counter()
                call()
                answered += 1
                if resident_at is None and getattr(index.store, "_resident", None) is not None:
                    resident_at = answered
                if round_no:  # round 0 warms caches and code paths
                    times[name].append(time.perf_counter() - started)
                    if name == "explain":
                        times["query embedding"].append(embedding_time[0])
    return {
        "model_load": model_load,
        "times": times,
        "targets": len(targets),
        "pairs": len(pairs),
        "answers": answered,
        "resident_at": resident_at,
    }


@contextmanager
def python_codec() -> Iterator[None]:
    """The Neo4j driver's own pure-Python Bolt codec, as it runs without neo4j-rust-ext: its packstream
    classes pick the Rust or the Python path when they are defined, so the Python path's two methods
    (the driver's own ``_py_pack`` and ``_unpack``, as it defines them without the extension) stand in
    for the Rust ones while the block runs."""
    from neo4j._codec.packstream.v1 import Packer, Unpacker

    saved = Packer._pack, Unpacker.unpack

    def pack(self, data, dehydration_hooks=None):
        self._py_pack(data, dehydration_hooks)

    def unpack(self, hydration_hooks=None):
        return self._unpack(hydration_hooks=hydration_hooks)

    Packer._pack, Unpacker.unpack = pack, unpack  # type: ignore[method-assign]
    try:
        yield
    finally:
        Packer._pack, Unpacker.unpack = saved  # type: ignore[method-assign]


PYTHON_CODEC = "neo4j, Python codec"  # the row of the driver without neo4j-rust-ext (``python_codec``)
CODEC_PAIRS = 2  # Neo4j sessions per codec, in turn (Rust, Python, Rust, ...), their samples pooled


def merged(results: list[dict]) -> dict:
    """Sessions of one variant as one: their samples pooled, the first session's model load and memory."""
    first = dict(results[0])
    first["times"] = {name: [x for r in results for x in r["times"][name]] for name in first["times"]}
    return first


def main() -> None:
    quiet_model_loading()
    load = os.getloadavg()
    backends = ["kuzu"] + (["neo4j"] if os.environ.get("NEO4J_URI") else [])
    projects = [("examples/shop", ROOT / "examples" / "shop"), ("requests 2.32.3", fetch_sdist("requests", "2.32.3"))]
    rows = []
    for label, source in projects:
        with scratch_copy(source, "cg-latency-") as repo:
            for backend in backends:
                index(repo, backend)
                if backend == "neo4j":  # with the Rust codec cg installs, and the driver's Python one, in turn
                    runs: dict[str, list[dict]] = {"neo4j": [], PYTHON_CODEC: []}
                    for _ in range(CODEC_PAIRS):
                        runs["neo4j"].append(measure(repo, backend, QUESTIONS[label]))
                        with python_codec():
                            runs[PYTHON_CODEC].append(measure(repo, backend, QUESTIONS[label]))
                    variants = [(name, merged(results)) for name, results in runs.items()]
                else:
                    variants = [(backend, measure(repo, backend, QUESTIONS[label]))]
                for name, result in variants:
                    rows.append((label, name, result))
                    p50 = statistics.median(result["times"]["explain"]) * 1000
                    print(f"{label} on {name}: explain p50 {p50:.0f} ms", flush=True)

    lines = [
        machine_line(),
        "",
        f"Warm process, {ROUNDS} timed rounds after one warm-up round; per round every question is explained",
        "(its embedding computed by the model, not taken from the cache), impact runs on each question's first",
        "seed and path from the flow's first entry point to that seed. Defaults: depth 2, fan-out 6, budget",
        f"6000 tokens. Model: {model_line()}; model load is timed apart and is not in any answer.",
        "Explain includes embedding the question with the model; the query-embedding columns show that part.",
        "Graph in memory = the answer (of all the session's, the warm-up's included) after which the embedded",
        "store held the call graph in memory (cg/graph/resident.py: once the walks had cost 1.5 s); the walks",
        "of later answers read no statements.",
        f"Load average (1 min) at the start and the end of the run: {load[0]:.1f} and {os.getloadavg()[0]:.1f}",
        f"on {os.cpu_count()} cores; a p95 far above the p50 is mostly time spent waiting for a core.",
        *(
            [
                f"Neo4j: {CODEC_PAIRS} sessions with the Bolt codec in Rust (neo4j-rust-ext, which cg installs) and"
                f" {CODEC_PAIRS} with the driver's Python codec (*{PYTHON_CODEC}*), in turn, on the same index;"
                " each row pools its sessions' samples."
            ]
            if "neo4j" in backends
            else ["Neo4j: not measured in this run (NEO4J_URI not set)."]
        ),
        "",
        "| project | backend | model load s | explain p50 ms | explain p95 ms | query embedding p50 ms "
        "| query embedding p95 ms | impact p50 ms | impact p95 ms | path p50 ms | path p95 ms "
        "| samples (explain/impact/path) | graph in memory |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, backend, r in rows:
        t = r["times"]
        cells = []
        for name in ("explain", "query embedding", "impact", "path"):
            values = t[name] or [float("nan")]
            cells += [f"{statistics.median(values) * 1000:.0f}", f"{percentile(values, 0.95) * 1000:.0f}"]
        counts = "/".join(str(len(t[n])) for n in ("explain", "impact", "path"))
        held = f"from answer {r['resident_at']}" if r["resident_at"] else "no"
        held += f" of {r['answers']}"
        lines.append(f"| {label} | {backend} | {r['model_load']:.1f} | {' | '.join(cells)} | {counts} | {held} |")
    write_section("Answer latency (benchmarks/latency.py)", "\n".join(lines))
    print("results written to benchmarks/RESULTS.md")


if __name__ == "__main__":
    main()
