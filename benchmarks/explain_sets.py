"""What ``cg explain`` shows for the question sets' questions, under each fusion: does the flow it
prints hold the definitions a right answer must show?

The sets (benchmarks/question_sets.py SETS) were written by reading each project's code, each question
with the definitions that answer it (its gold). For every answerable question of the flow and
location kinds (the "how does X work" and "where is X" questions explain is for) the script runs
``Index.explain`` with its defaults and counts the gold definitions among the steps explain shows
with their code (or folded into a step): gold recall per question, the share of questions whose
every gold definition is shown, and the steps and tokens it took. Two rankings choose the seeds:
the hand-set ``score`` fusion and the learned one, the learned one from the fold that never saw the
set (benchmarks/fit_ranker.py ``fold_ranking``; run fit_ranker.py first so its features are saved).
The shop and httpx sets are the ones the ranking and explain were developed on; the others are
reported apart, as in retrieval.py --sets.

    python benchmarks/explain_sets.py [--work DIR]   # writes the "Explain on the question sets" section
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from fit_ranker import fold_ranking  # noqa: E402
from question_sets import SETS, gold_hit, index_set  # noqa: E402
from results import machine_line, model_line, write_section  # noqa: E402

from cg.api import open_index, quiet_model_loading  # noqa: E402
from cg.queries.evaluate import load_questions  # noqa: E402
from cg.queries.explain import Explanation  # noqa: E402
from cg.queries.query import Ranking  # noqa: E402

KINDS = ("flow", "location")
TUNED_ON = ("QUESTIONS", "httpx")  # the shop's and httpx's sets: explain and the ranking were developed on them


def shown(explanation: Explanation) -> list[dict]:
    """The definitions explain shows: its steps with code (full, trimmed or a class outline) and what
    it folded into them, as dicts that benchmarks/question_sets.py ``gold_hit`` reads."""
    out = []
    for node_id in explanation.order:
        node = explanation.nodes[node_id]
        if node.code_state == "omitted":
            continue
        out.append({"id": node.id, **node.node})
        out.extend({"id": f.get("id"), **f} for f in node.folded)
    return out


def score(explanation: Explanation, gold: list) -> tuple[float, int, int]:
    """(gold recall among the shown definitions, steps shown, tokens used)."""
    steps = shown(explanation)
    found = sum(any(gold_hit(g, s, False) for s in steps) for g in gold)
    return (
        found / len(gold),
        sum(1 for i in explanation.order if explanation.nodes[i].code_state != "omitted"),
        explanation.tokens_used,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, help="keep the indexed copies here (reused when present)")
    args = parser.parse_args()
    quiet_model_loading()
    work = args.work or Path(tempfile.mkdtemp(prefix="cg-explain-sets-"))
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    rows: list[tuple[str, str, str, int, float, float, float, float]] = []
    pooled: dict[str, list[tuple[float, int, int]]] = {}
    for label, fetch, question_file in SETS:
        questions = [q for q in load_questions(question_file) if q.kind in KINDS and q.gold]
        if not questions:
            continue
        copy = index_set(fetch(), question_file, work)
        learned, fitted_on = fold_ranking(question_file.stem)
        arms = {"score": Ranking.default().with_fusion("score"), "learned (LOO)": learned}
        with open_index(copy, history_commits=0) as idx:
            for arm, ranking in arms.items():
                idx.ranking = ranking
                scored = [score(idx.explain(q.question), q.gold) for q in questions]
                if question_file.stem not in TUNED_ON:
                    pooled.setdefault(arm, []).extend(scored)
                rows.append(
                    (
                        label,
                        arm,
                        fitted_on if arm != "score" else "hand-set",
                        len(scored),
                        statistics.mean(r for r, _, _ in scored),
                        sum(r == 1.0 for r, _, _ in scored) / len(scored),
                        statistics.mean(s for _, s, _ in scored),
                        statistics.mean(t for _, _, t in scored),
                    )
                )
                print(label, arm, f"gold recall {rows[-1][4]:.3f}", flush=True)
    lines = [
        machine_line(),
        f"Model: {model_line()}; whole run {time.perf_counter() - started:.0f} s.",
        "",
        f"Questions: every answerable {' and '.join(KINDS)} question of each set (benchmarks/question_sets.py),",
        "asked of `cg explain` with its defaults (depth, fan-out, token budget); shown = the steps printed with",
        "code (full, trimmed or a class outline) and the adapters folded into them. Gold recall: the share of",
        "a question's gold definitions shown; all shown: the share of questions with every one shown. Seeds",
        "ranked by the hand-set score fusion and by the learned one from the fold that left the set out.",
        "",
        "| set | seeds by | learned weights fitted on | n | gold recall | all gold shown | steps shown | tokens used |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, arm, fitted, n, recall, full, steps, tokens in rows:
        lines.append(f"| {label} | {arm} | {fitted} | {n} | {recall:.3f} | {full:.0%} | {steps:.1f} | {tokens:.0f} |")
    for arm, scored in pooled.items():
        lines.append(
            f"| sets nobody tuned on | {arm} | | {len(scored)} | {statistics.mean(r for r, _, _ in scored):.3f} |"
            f" {sum(r == 1.0 for r, _, _ in scored) / len(scored):.0%} | {statistics.mean(s for _, s, _ in scored):.1f}"
            f" | {statistics.mean(t for _, _, t in scored):.0f} |"
        )
    body = "\n".join(lines)
    print(body)
    write_section("Explain on the question sets (benchmarks/explain_sets.py)", body)


if __name__ == "__main__":
    main()
