"""Retrieval quality and embedding speed, in one run, on the same questions:

- the seeds' naive baseline: 1,000-character windows with 200 characters of overlap, embedded with
  the same model, ranked by cosine (a window counts for a gold definition it overlaps);
- cg's arms alone (BM25 over analyzed identifiers, the vector arm), fused (hybrid: RRF and cg's default
  score fusion, see cg/queries/search.py), and hybrid followed by graph expansion (the context `cg explain` shows);

on examples/shop (examples/shop/QUESTIONS.yaml) and httpx 0.27.2 from its PyPI sdist
(benchmarks/questions/httpx.yaml). Then embedding throughput over the same chunk texts for the
plain torch path (sentence-transformers) and the fast candidates (ONNX Runtime fp32, int8 and
int8-mixed, on a local export; int8 is cg's default; torch
dynamic int8 quantization, a 128-token window, both, and a model2vec static model distilled locally
from the installed MiniLM files), timed in interleaved rounds (best round each, so that a neighbour's
load hits every path alike), with each one's cosine agreement with the torch vectors and the hybrid
recall@10 and MRR it gives when the whole index is built with it.

    python benchmarks/retrieval.py
    python benchmarks/retrieval.py --sets [STEM ...]   # each question set on its own against BM25 (question_sets.py)
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from ingest import fetch_sdist  # noqa: E402
from results import machine_line, write_section  # noqa: E402

from cg.config import load_settings  # noqa: E402
from cg.embed import Embedder, resolve_model_path  # noqa: E402
from cg.graph.kuzu_store import KuzuStore  # noqa: E402
from cg.ingest.pipeline import index_repository  # noqa: E402
from cg.ingest.walk import WalkReport, walk  # noqa: E402
from cg.queries.evaluate import Question, evaluate, load_questions  # noqa: E402
from cg.queries.query import Ranking  # noqa: E402

WINDOW, OVERLAP = 1000, 200
SETS = [
    ("examples/shop", ROOT / "examples" / "shop", ROOT / "examples" / "shop" / "QUESTIONS.yaml"),
    ("httpx 0.27.2", None, HERE / "questions" / "httpx.yaml"),
]


def fetch_httpx() -> Path:
    return fetch_sdist("httpx", "0.27.2")


def naive_windows(repo: Path) -> list[tuple[str, int, int, str]]:
    """(path, first line, last line, text) for 1,000-character windows with 200 overlap per file."""
    windows = []
    for source in walk(repo, WalkReport()):
        text = source.data.decode("utf-8")
        starts = range(0, max(len(text) - OVERLAP, 1), WINDOW - OVERLAP)
        for start in starts:
            chunk = text[start : start + WINDOW]
            first = text.count("\n", 0, start) + 1
            windows.append((source.path, first, first + chunk.count("\n"), chunk))
    return windows


def naive_eval(store: KuzuStore, embedder: Embedder, repo: Path, questions: list[Question]) -> dict[str, float]:
    windows = naive_windows(repo)
    matrix = embedder.embed([w[3] for w in windows])
    ranges: dict[str, tuple[str, int, int]] = {}
    for q in questions:
        for gold in q.gold:
            if gold.name and gold.name not in ranges:
                found = [s for s in store.find_symbols(gold.name, limit=20) if s["qualname"] == gold.name]
                if found:
                    s = found[0]
                    ranges[gold.name] = (s["path"], s["start_line"], s["end_line"])
    recalls5, recalls10, rrs = [], [], []
    for q in questions:
        order = np.argsort(-(matrix @ embedder.embed([q.question])[0]))[:10]
        ranks = []
        for gold in q.gold:
            path, lo, hi = ranges.get(gold.name, ("", 0, 0)) if gold.name else (gold.path, *gold.lines)
            rank = next(
                (
                    i
                    for i, w in enumerate(order, 1)
                    if windows[w][0] == path and windows[w][1] <= hi and windows[w][2] >= lo
                ),
                None,
            )
            ranks.append(rank)
        recalls5.append(sum(1 for r in ranks if r and r <= 5) / len(ranks))
        recalls10.append(sum(1 for r in ranks if r) / len(ranks))
        found = [r for r in ranks if r]
        rrs.append(1 / min(found) if found else 0.0)
    return {
        "recall@5": statistics.mean(recalls5),
        "recall@10": statistics.mean(recalls10),
        "mrr": statistics.mean(rrs),
        "units": len(windows),
    }


def build(repo: Path, work: Path, embedder: Embedder, name: str) -> tuple[KuzuStore, Path]:
    copy = work / name
    if not copy.exists():
        shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(".cg", "__pycache__"))
    store = KuzuStore(copy / ".cg" / "graph.kuzu")
    settings = load_settings(copy)
    index_repository(settings, store, embedder)
    return store, copy


def distilled_model(work: Path) -> Path:
    from model2vec.distill import distill

    target = work / "minilm-static"
    distill(model_name=resolve_model_path("all-MiniLM-L6-v2"), pca_dims=256).save_pretrained(str(target))
    return target


ROUNDS = 3


def speed_and_agreement(embedders: list[tuple[str, Embedder]], texts: list[str]) -> dict[str, tuple[float, str]]:
    """Best-of-ROUNDS texts/s per path, interleaved, and the cosine (mean / min) to the first path's vectors."""
    for _, embedder in embedders:
        embedder.encode(texts[:8])  # model loaded (or exported) before any clock starts
    best: dict[str, float] = {}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(ROUNDS):
        for name, embedder in embedders:
            started = time.perf_counter()
            vectors[name] = embedder.encode(texts)
            best[name] = max(best.get(name, 0.0), len(texts) / (time.perf_counter() - started))
    reference = vectors[embedders[0][0]]
    out = {}
    for name, _ in embedders:
        if vectors[name].shape == reference.shape:
            cosines = (vectors[name] * reference).sum(axis=1)
            agreement = f"{cosines.mean():.4f} / {cosines.min():.4f}"
        else:
            agreement = "other space"
        out[name] = (best[name], agreement)
    return out


def per_set(names: list[str]) -> None:
    """The sets in question_sets.SETS whose question file's stem is in ``names`` (all when empty)
    indexed and scored, each saved under benchmarks/data/; then the section written from every set
    saved there, so sets can be scored in separate (parallel) runs and reported together."""
    from fit_ranker import fold_ranking
    from question_sets import SETS, load_scores, report, save_scores, score_set

    work = Path(tempfile.mkdtemp(prefix="cg-sets-"))
    folds: dict[str, str] = {}
    try:
        for label, fetch, question_file in SETS:
            if names and question_file.stem not in names:
                continue
            started = time.perf_counter()
            # a learned default ranks each set with weights fitted without it (benchmarks/fit_ranker.py)
            ranking, folds[label] = (
                (None, "") if Ranking.default().fusion != "learned" else fold_ranking(question_file.stem)
            )
            rows, unanswerable = score_set(fetch(), question_file, work, ranking)
            save_scores(question_file, rows, unanswerable)
            print(label, f"{time.perf_counter() - started:.0f}s", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    results = [(label, *saved) for label, _, question_file in SETS if (saved := load_scores(question_file))]
    lines = [machine_line(), "", *report(results)]
    if any(folds.values()):
        done = "; ".join(f"{k}: {v}" for k, v in folds.items())
        lines += ["", f"Learned ranking per set, scored in this run: {done}."]
    print("\n".join(lines), flush=True)
    write_section("Retrieval per question set (benchmarks/retrieval.py --sets)", "\n".join(lines))


def main() -> None:
    if "--sets" in sys.argv[1:]:
        per_set([a for a in sys.argv[1:] if a != "--sets"])
        return
    work = Path(tempfile.mkdtemp(prefix="cg-retrieval-"))
    cache = work / "cache"  # a private cache: every path here really embeds what it is timed on
    quality_rows, speed_rows = [], []
    try:
        plain = Embedder("all-MiniLM-L6-v2", cache)  # sentence-transformers on torch, fp32: the baseline path
        default = Embedder("all-MiniLM-L6-v2", cache, backend="onnx", precision="int8")  # cg's default
        fast = [
            ('ONNX fp32 (`embed_backend = "onnx"`)', Embedder("all-MiniLM-L6-v2", cache, backend="onnx")),
            ('ONNX int8 per-channel (`embed_precision = "int8"`, the default)', default),
            (
                'ONNX int8, FFN outputs fp32 (`embed_precision = "int8-mixed"`)',
                Embedder("all-MiniLM-L6-v2", cache, backend="onnx", precision="int8-mixed"),
            ),
            ('torch int8 (`embed_precision = "int8"`)', Embedder("all-MiniLM-L6-v2", cache, precision="int8")),
            ("torch fp32, 128-token window", Embedder("all-MiniLM-L6-v2", cache, max_tokens=128)),
            ("torch int8, 128-token window", Embedder("all-MiniLM-L6-v2", cache, precision="int8", max_tokens=128)),
        ]
        try:
            fast.append(("model2vec static, distilled locally", Embedder(str(distilled_model(work)), cache / "m2v")))
        except ImportError:
            print("model2vec[distill] is not installed: the static-model path is skipped", flush=True)
        for label, repo, question_file in SETS:
            repo = repo or fetch_httpx()
            questions = load_questions(question_file)
            store, copy = build(repo, work, default, f"{label.split()[0]}-default")
            naive = naive_eval(store, default, copy, questions)
            quality_rows.append((label, "naive 1,000-char windows, cosine (seeds' baseline)", naive))
            for mode, fusion, name in (
                ("lexical", "score", "BM25 only (cg analyzer)"),
                ("vector", "score", "vector only"),
                ("hybrid", "rrf", 'hybrid, RRF (`fusion = "rrf"`)'),
                ("hybrid", "score", "hybrid, score fusion"),
                ("graph", "score", "hybrid (score fusion) + graph arm and expansion (default)"),
            ):
                ranking = Ranking.default().with_fusion(fusion)
                summary = evaluate(store, default, questions, mode, ranking=ranking).summary()
                quality_rows.append((label, name, summary))
                print(label, name, summary, flush=True)
            texts = [
                row[0]
                for row in store.cypher("MATCH (s:Symbol) RETURN s.header + '\n' + s.text LIMIT 400", write=True)[1]
            ]
            speeds = speed_and_agreement([("torch fp32", plain), *fast], texts)
            base_speed = speeds["torch fp32"][0]
            default_quality = evaluate(store, default, questions, "hybrid").summary()
            store.close()
            baseline, _ = build(repo, work, plain, f"{label.split()[0]}-torch")
            base_quality = evaluate(baseline, plain, questions, "hybrid").summary()
            baseline.close()
            speed_rows.append(
                (
                    label,
                    'torch fp32 (sentence-transformers, `embed_backend = "torch"`)',
                    *speeds["torch fp32"],
                    1.0,
                    base_quality,
                )
            )
            for name, embedder in fast:
                speed, agreement = speeds[name]
                if embedder is default:
                    quality = default_quality
                else:
                    other, _ = build(repo, work, embedder, f"{label.split()[0]}-{len(speed_rows)}")
                    quality = evaluate(other, embedder, questions, "hybrid").summary()
                    other.close()
                speed_rows.append((label, name, speed, agreement, speed / base_speed, quality))
                print(label, name, f"{speed:.0f}/s", agreement, quality, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    lines = [
        machine_line(),
        "",
        "Questions: examples/shop/QUESTIONS.yaml and benchmarks/questions/httpx.yaml (flow, location,",
        "exact-token and impact questions written as a user would ask them). recall@k = share of a question's",
        "gold definitions in the first k results; MRR over the first 10. Every row embeds with cg's default",
        "(ONNX Runtime, int8 per channel); the second table compares the embedding paths.",
        "",
        "| set | method | recall@5 | recall@10 | MRR |",
        "|---|---|---|---|---|",
    ]
    for label, name, r in quality_rows:
        lines.append(f"| {label} | {name} | {r['recall@5']:.3f} | {r['recall@10']:.3f} | {r['mrr']:.3f} |")
    lines += [
        "",
        f"Embedding throughput over the same 400 definition texts (each path's own batching; best of {ROUNDS}",
        "interleaved rounds), cosine of each path's vectors to the torch fp32 ones (mean / min), and the",
        "hybrid quality (default score fusion) of an index built entirely with each path (Δ = recall@10 minus",
        "torch fp32's):",
        "",
        "| set | path | texts/s | speed-up | cosine to torch | hybrid recall@10 | Δ recall@10 | hybrid MRR |",
        "|---|---|---|---|---|---|---|---|",
    ]
    base = {}
    for label, name, speed, agreement, ratio, q in speed_rows:
        base.setdefault(label, q["recall@10"])
        lines.append(
            f"| {label} | {name} | {speed:.1f} | {ratio:.2f}x | {agreement} | {q['recall@10']:.3f} |"
            f" {q['recall@10'] - base[label]:+.3f} | {q['mrr']:.3f} |"
        )
    write_section("Retrieval quality and embedding speed (benchmarks/retrieval.py)", "\n".join(lines))


if __name__ == "__main__":
    main()
