"""Which vector path for the embedded store: Kùzu exact scan vs numpy exact vs Kùzu's HNSW index.

Random unit vectors (384-d, the MiniLM dimension) in a Kùzu table shaped like cg's Symbol table.
Measures build time, median query latency over 20 queries, and HNSW's recall@10 against the exact
answer. HNSW is built on a smaller table (its build is the slow part); the row says which size.

    python benchmarks/vector_search.py [--sizes 10000,50000] [--hnsw-size 10000]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import kuzu
import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results import machine_line, write_section  # noqa: E402

DIM = 384
QUERIES = 20


def make_table(conn: kuzu.Connection, vectors: np.ndarray) -> None:
    conn.execute(f"CREATE NODE TABLE Symbol(id STRING PRIMARY KEY, embedding FLOAT[{DIM}])")
    ids = pa.array([f"s{i}" for i in range(len(vectors))])
    flat = pa.array(vectors.reshape(-1), type=pa.float32())
    emb = pa.FixedSizeListArray.from_arrays(flat, DIM)
    conn.execute("COPY Symbol FROM $t", {"t": pa.table({"id": ids, "embedding": emb})})


def timed(fn, queries: np.ndarray) -> tuple[float, list[list[str]]]:
    times, answers = [], []
    for q in queries:
        started = time.perf_counter()
        answers.append(fn(q))
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000, answers


def kuzu_exact(conn):
    def run(q: np.ndarray) -> list[str]:
        res = conn.execute(
            f"MATCH (n:Symbol) WITH n, array_cosine_similarity(n.embedding, CAST($q AS FLOAT[{DIM}])) AS s"
            " RETURN n.id ORDER BY s DESC LIMIT 10",
            {"q": q.tolist()},
        )
        return [r[0] for r in res.get_all()]

    return run


def numpy_exact(vectors: np.ndarray):
    def run(q: np.ndarray) -> list[str]:
        scores = vectors @ q
        top = np.argpartition(-scores, 10)[:10]
        return [f"s{i}" for i in top[np.argsort(-scores[top])]]

    return run


def kuzu_hnsw(conn):
    def run(q: np.ndarray) -> list[str]:
        res = conn.execute(
            "CALL QUERY_VECTOR_INDEX('Symbol', 'emb_hnsw', $q, 10) RETURN node.id ORDER BY distance",
            {"q": q.tolist()},
        )
        return [r[0] for r in res.get_all()]

    return run


def recall(answers: list[list[str]], truth: list[list[str]]) -> float:
    return statistics.mean(len(set(a) & set(t)) / len(t) for a, t in zip(answers, truth, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,50000")
    parser.add_argument("--hnsw-size", type=int, default=10000)
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    rows = []
    for size in [int(s) for s in args.sizes.split(",")]:
        vectors = rng.standard_normal((size, DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        queries = vectors[rng.choice(size, QUERIES, replace=False)] + 0.1 * rng.standard_normal((QUERIES, DIM))
        queries = (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)
        tmp = Path(tempfile.mkdtemp(prefix="cg-vec-"))
        try:
            db = kuzu.Database(str(tmp / "db"))
            conn = kuzu.Connection(db)
            conn.execute("LOAD EXTENSION vector")
            started = time.perf_counter()
            make_table(conn, vectors)
            load_s = time.perf_counter() - started
            np_ms, truth = timed(numpy_exact(vectors), queries)
            kz_ms, kz_answers = timed(kuzu_exact(conn), queries)
            rows.append((size, "numpy exact (vectors held in memory)", 0.0, np_ms, 1.0))
            rows.append((size, "Kùzu exact scan (array_cosine_similarity)", 0.0, kz_ms, recall(kz_answers, truth)))
            if size <= args.hnsw_size:
                started = time.perf_counter()
                conn.execute("CALL CREATE_VECTOR_INDEX('Symbol', 'emb_hnsw', 'embedding', metric := 'cosine')")
                build_s = time.perf_counter() - started
                hn_ms, hn_answers = timed(kuzu_hnsw(conn), queries)
                rows.append((size, "Kùzu HNSW index", build_s, hn_ms, recall(hn_answers, truth)))
            print(f"{size}: loaded in {load_s:.1f}s", flush=True)
            conn.close()
            db.close()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    lines = [
        machine_line(),
        "",
        f"{DIM}-d random unit vectors, {QUERIES} queries near stored vectors, top-10; latency is the median.",
        "Recall@10 is measured against numpy's exact answer.",
        "",
        "| vectors | method | build s | query ms | recall@10 |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| {n} | {m} | {b:.1f} | {q:.1f} | {r:.3f} |" for n, m, b, q, r in rows]
    lines += [
        "",
        "Decision: cg's embedded store uses the Kùzu exact scan. It needs no build, is never stale after an",
        "incremental write, returns exact answers, and answers in tens of milliseconds at these sizes; the",
        "HNSW build time grows with the table and would be paid again on every rebuild.",
    ]
    write_section("Vector search on the embedded store (benchmarks/vector_search.py)", "\n".join(lines))


if __name__ == "__main__":
    main()
