"""The learned ranking (``fusion = "learned"``): fitted and measured leave-one-repository-out.

For every question of every set in question_sets.SETS the script takes the pool ``cg search`` orders
(cg/queries/search.py ``candidates``: the arms fused, the graph arm, about 80 definitions) with each
candidate's features (``rank_features``: the arms' normalised scores, the graph lift, the string-literal
match, the priors as flags, the caller count, links to the other hits and their edge confidence) and
whether it is a gold answer. A pairwise logistic regression (scikit-learn; each answer against each
other candidate of its question, see ``fit``) is fitted on every set but one and the held-out set is
asked again with ``cg search`` ranked by that fold's weights; each set is reported on its own, from the
fold that never saw it, beside the hand-set ranking (``fusion = "score"``: fixed weights and priors)
and BM25 in the same run. A linear model keeps the ranking explainable: each weight says what a
feature is worth, and the shipped file is a dozen numbers.

The model cg ships is fitted the same way on every set (``--write-model`` writes
cg/queries/ranker_model.py); its figures are not scores. The features are saved under
benchmarks/data/ranker-features/ so that ``retrieval.py --sets`` can score each set with the fold that
left it out (``fold_ranking``).

    python benchmarks/fit_ranker.py [--work DIR] [--write-model]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from question_sets import SETS, K, Scored, asked, gold_hit, index_set, score_index, summary  # noqa: E402
from results import machine_line, model_line, publish, write_model_module  # noqa: E402

from cg.api import open_index  # noqa: E402
from cg.queries.evaluate import KINDS, load_questions  # noqa: E402
from cg.queries.query import Query, Ranking  # noqa: E402
from cg.queries.search import FEATURES, candidates  # noqa: E402

MODEL_FILE = ROOT / "cg" / "queries" / "ranker_model.py"
SAVED = HERE / "data" / "ranker-features"
C = 1.0  # scikit-learn's default regularisation; not tuned (tuning it would need a fold of its own)


def extract(copy: Path, question_file: Path) -> list[dict[str, Any]]:
    """Per question: its kind and, per pool candidate, the features and whether it is gold."""
    out = []
    with open_index(copy, history_commits=0) as idx:
        ranking = Ranking.default().with_fusion("score")
        for q in load_questions(question_file):
            query = Query.parse(q.question).with_vector(idx.embedder)
            pool, symbols, features, _ = candidates(idx.store, query, K, ranking, with_features=True)
            assert features is not None
            rows = []
            for doc, _, _ in pool:
                sym = symbols.get(doc)
                if sym is None or not asked(q, [sym]):
                    continue
                gold = any(gold_hit(g, sym, False) for g in q.gold)
                rows.append({"x": [features[doc][f] for f in FEATURES], "y": int(gold)})
            out.append({"id": q.id, "kind": q.kind, "rows": rows})
    return out


def fit(sets: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """A pairwise logistic regression (RankNet's loss with a linear scorer): for every question of
    ``sets``, each gold candidate against each other candidate of its pool, the feature difference
    labelled 1 and its negation 0, every question weighing the same. Ordering within a question is
    what a ranking needs; a pointwise fit also learns how likely any candidate of any question is
    an answer, which the order does not use."""
    from sklearn.linear_model import LogisticRegression

    pairs, labels, weights = [], [], []
    for questions in sets.values():
        for q in questions:
            gold = [np.array(r["x"], dtype=float) for r in q["rows"] if r["y"]]
            other = [np.array(r["x"], dtype=float) for r in q["rows"] if not r["y"]]
            count = len(gold) * len(other)
            for g in gold:
                for o in other:
                    pairs += [g - o, o - g]
                    labels += [1, 0]
                    weights += [1 / count, 1 / count]
    model = LogisticRegression(C=C, fit_intercept=False, max_iter=5000)
    model.fit(np.array(pairs), np.array(labels), sample_weight=np.array(weights) * len(weights) / sum(weights))
    return {
        "coef": {f: round(float(w), 4) for f, w in zip(FEATURES, model.coef_[0], strict=True)},
        "intercept": 0.0,
        "fitted_on": sorted(sets),
    }


def saved_features() -> dict[str, list[dict[str, Any]]]:
    """The features of every set saved by the last run, by question file stem."""
    return {p.stem: json.loads(p.read_text()) for p in sorted(SAVED.glob("*.json"))} if SAVED.is_dir() else {}


def fold_ranking(stem: str) -> tuple[Ranking, str]:
    """The learned ranking fitted on every saved set but ``stem`` (and what it was fitted on), for
    scoring ``stem`` without having seen it; the shipped model, said so, when nothing is saved."""
    others = {s: q for s, q in saved_features().items() if s != stem}
    if not others:
        return Ranking.default().with_fusion("learned"), "the shipped model (no saved features: in-sample)"
    return Ranking.default().with_model(fit(others)), "fitted on " + ", ".join(sorted(others))


def write_model(model: dict[str, Any]) -> None:
    write_model_module(
        MODEL_FILE,
        "Written by benchmarks/fit_ranker.py (``--write-model``); do not edit by hand.\n\n"
        'The learned ranking (``fusion = "learned"``, cg/queries/search.py ``learned_score``): a pairwise\n'
        "logistic regression's weight per feature (its intercept cancels in a pair); fitted on every question\n"
        "set named in ``fitted_on``. Its figures in benchmarks/RESULTS.md come from leave-one-repository-out folds.",
        model,
    )


def table(results: list[tuple[str, list[Scored], list[Scored]]]) -> list[str]:
    lines = [
        "| set | kind | n | hand-set recall@10 | hand-set MRR | learned (LOO) recall@10 | learned (LOO) MRR"
        " | BM25 recall@10 | BM25 MRR |",
        "|---|---|---|---|---|---|---|---|---|",
    ]

    def row(label: str, kind: str, before: list[Scored], after: list[Scored]) -> str:
        b, a = summary(before), summary(after)
        return (
            f"| {label} | {kind} | {a['n']} | {b['cg_recall']:.3f} | {b['cg_mrr']:.3f} | {a['cg_recall']:.3f} |"
            f" {a['cg_mrr']:.3f} | {a['bm25_recall']:.3f} | {a['bm25_mrr']:.3f} |"
        )

    for label, before, after in results:
        for kind in [*KINDS, "**all**"]:
            b = [r for r in before if kind == "**all**" or r.question.kind == kind]
            a = [r for r in after if kind == "**all**" or r.question.kind == kind]
            if a:
                lines.append(row(label, kind, b, a))
    unseen = [(b, a) for label, b, a in results if label.split()[0] not in ("examples/shop", "httpx")]
    if unseen:
        lines.append(
            row(
                "sets written for issue 16 (not tuned on)",
                "**all**",
                [r for b, _ in unseen for r in b],
                [r for _, a in unseen for r in a],
            )
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, help="keep the indexed copies here (reused when present)")
    parser.add_argument("--write-model", action="store_true", help="write cg/queries/ranker_model.py")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="cg-ranker-"))
    started = time.perf_counter()
    try:
        copies, features = {}, {}
        for label, fetch, question_file in SETS:
            copies[label] = index_set(fetch(), question_file, work)
            features[question_file.stem] = extract(copies[label], question_file)
            print(label, "features", f"{time.perf_counter() - started:.0f}s", flush=True)
        SAVED.mkdir(parents=True, exist_ok=True)
        for stem, questions in features.items():
            (SAVED / f"{stem}.json").write_text(json.dumps(questions))
        results, folds = [], []
        for label, _, question_file in SETS:
            model = fit({s: q for s, q in features.items() if s != question_file.stem})
            folds.append((label, model))
            before, _ = score_index(copies[label], question_file, Ranking.default().with_fusion("score"))
            after, _ = score_index(copies[label], question_file, Ranking.default().with_model(model))
            results.append((label, before, after))
            print(label, "hand-set", summary(before), "learned", summary(after), flush=True)
        shipped = fit(features)
        if args.write_model:
            write_model(shipped)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    lines = [
        machine_line(),
        f"Model: {model_line()}; whole run {time.perf_counter() - started:.0f} s.",
        "",
        "Each set is ranked by a pairwise logistic regression fitted on the other sets' questions only",
        "(leave-one-repository-out) over the features of cg/queries/search.py `rank_features`; hand-set =",
        '`fusion = "score"` (fixed arm weights, then the priors\' factors); BM25 as in benchmarks/retrieval.py',
        f"--sets; recall@{K} and MRR over the first {K} (strict: the hit is the gold definition). Pins (a named",
        "definition, the library code holding a quoted message, an impact question's callers) come first in both.",
        "",
        *table(results),
        "",
        "Weights of each fold (the held-out set never seen by its weights):",
        "",
        "| held out | " + " | ".join(FEATURES) + " | intercept |",
        "|---|" + "---|" * (len(FEATURES) + 1),
        *(
            f"| {label} | " + " | ".join(f"{m['coef'][f]:+.2f}" for f in FEATURES) + f" | {m['intercept']:+.2f} |"
            for label, m in folds
        ),
        "",
        f"Shipped model (fitted on all sets, not a score): {shipped}",
    ]
    publish("Learned ranking, leave-one-repository-out (benchmarks/fit_ranker.py)", lines)


if __name__ == "__main__":
    main()
