"""When ``cg explain`` should say "Nothing in the index matches": the refusal model, fitted and measured
leave-one-repository-out.

Questions: the answerable sets (examples/shop/QUESTIONS.yaml, benchmarks/questions/httpx.yaml) and the
unanswerable ones written for this (benchmarks/questions/unanswerable-shop.yaml and -httpx.yaml). For
every question the script computes what explain computes before it decides (cg/queries/explain.py:
search, the relevance rule, ``answerability``'s three features). A logistic regression (scikit-learn)
is fitted on one repository's questions; its threshold is the highest one that refuses at most
``TRAIN_FALSE_REFUSALS`` of that repository's answerable questions; then both are scored on the
other repository, whose questions they never saw. The model explain ships is fitted the same way on
both repositories (``--write-model`` writes cg/queries/refusal_model.py); its figures are not scores.

    python benchmarks/refusal.py [--work DIR] [--write-model]   # writes the "Explain refusals" section
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from ingest import fetch_sdist  # noqa: E402
from results import machine_line, model_line, write_model_module, write_section  # noqa: E402

from cg.api import open_index, quiet_model_loading  # noqa: E402
from cg.queries.explain import _relevant, answerability  # noqa: E402
from cg.queries.search import search  # noqa: E402

FEATURES = ("cosine",)  # the lexical signals and the gap did not carry from one repository to the other
MEASURED = ("coverage", "missing", "cosine", "cosine_gap")
TRAIN_FALSE_REFUSALS = 0.025  # at most this share of the training repository's answerable questions refused
MODEL_FILE = ROOT / "cg" / "queries" / "refusal_model.py"
REPOS = {
    "examples/shop": (
        lambda: ROOT / "examples" / "shop",
        ROOT / "examples" / "shop" / "QUESTIONS.yaml",
        HERE / "questions" / "unanswerable-shop.yaml",
    ),
    "httpx 0.27.2": (
        lambda: fetch_sdist("httpx", "0.27.2"),
        HERE / "questions" / "httpx.yaml",
        HERE / "questions" / "unanswerable-httpx.yaml",
    ),
}


def questions(path: Path) -> list[str]:
    return [q["question"] for q in yaml.safe_load(path.read_text())["questions"]]


def indexed_copy(source: Callable[[], Path], work: Path, name: str) -> Path:
    """A copy of the tree under ``work`` (kept between runs), indexed by the real CLI (incremental)."""
    target = work / name.split()[0].replace("/", "-")
    if not target.exists():
        shutil.copytree(source(), target, ignore=shutil.ignore_patterns(".cg", "__pycache__", ".git"))
    cg = Path(sys.executable).parent / "cg"
    subprocess.run([str(cg), "index", str(target)], check=True, capture_output=True, text=True)
    return target


def measure(repo: Path, asked: list[tuple[str, bool]]) -> list[dict]:
    """Per question: explain's three features, whether the relevance rule kept any hit, whether one was exact."""
    rows = []
    with open_index(repo) as session:
        for text, answerable in asked:
            query = session.query(text).with_vector(session.embedder)
            hits = search(session.store, session.embedder, query, limit=12, ranking=session.ranking)
            rows.append(
                {
                    "question": text,
                    "answerable": answerable,
                    "relevant": bool(_relevant(session.store, query, hits)),
                    "exact": any("exact" in h.ranks for h in hits),
                    **{k: v for k, v in answerability(session.store, query, hits, every=True).items() if k in MEASURED},
                }
            )
    return rows


def fit(rows: list[dict]) -> dict:
    from sklearn.linear_model import LogisticRegression  # a bench-only dependency

    x = np.array([[r[f] for f in FEATURES] for r in rows])
    y = np.array([r["answerable"] for r in rows], dtype=int)
    model = LogisticRegression(C=1.0, class_weight="balanced").fit(x, y)
    coef = {f: round(float(c), 4) for f, c in zip(FEATURES, model.coef_[0], strict=True)}
    fitted = {"coef": coef, "intercept": round(float(model.intercept_[0]), 4), "threshold": 0.0}
    answerable = sorted(probability(fitted, r) for r in rows if r["answerable"] and not r["exact"])
    allowed = int(TRAIN_FALSE_REFUSALS * sum(r["answerable"] for r in rows))
    fitted["threshold"] = round(float(answerable[allowed]) - 1e-4, 4) if answerable else 0.5
    return fitted


def probability(model: dict, row: dict) -> float:
    z = model["intercept"] + sum(model["coef"][f] * row[f] for f in FEATURES)
    return 1 / (1 + np.exp(-z))


def refuses(model: dict | None, row: dict) -> bool:
    """explain's decision: no exact identifier and a probability below the threshold; without a model,
    the rule explain had before (no hit holds a third of the question's terms or an exact identifier)."""
    if model is None:
        return not row["relevant"]
    return not row["exact"] and probability(model, row) < model["threshold"]


def rates(model: dict | None, rows: list[dict]) -> tuple[float, float, int, int]:
    bad = [r for r in rows if not r["answerable"]]
    good = [r for r in rows if r["answerable"]]
    return (
        sum(refuses(model, r) for r in bad) / len(bad),
        sum(refuses(model, r) for r in good) / len(good),
        len(bad),
        len(good),
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, help="where the indexed copies are kept (a temporary folder if unset)")
    parser.add_argument("--write-model", action="store_true", help="write cg/queries/refusal_model.py")
    args = parser.parse_args()
    quiet_model_loading()
    work = args.work or Path(tempfile.mkdtemp(prefix="cg-refusal-"))
    work.mkdir(parents=True, exist_ok=True)
    data = {}
    for name, (source, good, bad) in REPOS.items():
        repo = indexed_copy(source, work, name)
        asked = [(q, True) for q in questions(good)] + [(q, False) for q in questions(bad)]
        data[name] = measure(repo, asked)
        print(name, "measured", len(asked), "questions", flush=True)
    (work / "refusal-rows.json").write_text(json.dumps(data))
    lines = [
        "| fitted on | scored on | unanswerable refused | answerable refused (false) | before (relevance rule alone) |",
        "|---|---|---|---|---|",
    ]
    for test in data:
        train = [n for n in data if n != test]
        model = fit([r for n in train for r in data[n]])
        hit, false, n_bad, n_good = rates(model, data[test])
        base_hit, base_false, _, _ = rates(None, data[test])
        lines.append(
            f"| {', '.join(train)} | {test} | {hit:.0%} of {n_bad} | {false:.1%} of {n_good} |"
            f" {base_hit:.0%} / {base_false:.1%} |"
        )
        print(test, model, flush=True)
    shipped = fit([r for rows in data.values() for r in rows])
    shipped["fitted_on"] = sorted(data)
    if args.write_model:
        write_model_module(
            MODEL_FILE,
            "Written by benchmarks/refusal.py (``--write-model``); do not edit by hand.\n\n"
            'The logistic model behind explain\'s "Nothing in the index matches" (cg/queries/explain.py,\n'
            "``answerability``): weights of its three features, the intercept, and the probability below which\n"
            "explain refuses; fitted on every question set named in ``fitted_on``.",
            shipped,
        )
    body = "\n".join(
        [
            machine_line(),
            f"Model: {model_line()}.",
            "",
            "Questions: answerable examples/shop/QUESTIONS.yaml and benchmarks/questions/httpx.yaml; unanswerable",
            "benchmarks/questions/unanswerable-shop.yaml and unanswerable-httpx.yaml (20 each). Logistic regression",
            f"over {', '.join(FEATURES)} (cg/queries/explain.py, answerability: the best hit's cosine less the index's",
            "null_cosine, cg/ingest/baseline.py; the lexical signals and the cosine gap were measured too and did",
            "not carry from one repository to the other); threshold: the highest that refuses",
            f"at most {TRAIN_FALSE_REFUSALS:.1%} of the training repository's answerable questions. Each row is",
            "scored on the repository it was not fitted on (leave-one-repository-out).",
            "",
            *lines,
            "",
            f"Shipped model (fitted on both, not a score): {shipped}",
        ]
    )
    write_section("Explain refusals (nothing matches)", body)
    print(body)


if __name__ == "__main__":
    main()
