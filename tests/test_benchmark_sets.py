"""The evaluation sets' own rules (benchmarks/commit_questions.py, benchmarks/bm25.py, the question
files): a commit becomes a question whose gold is the definition it changed, chore commits do not,
the BM25 baseline finds a definition by its split identifier, and every question file is well-formed
with its unanswerable questions."""

from __future__ import annotations

import importlib
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from cg.queries.evaluate import load_questions
from tests.shop_history import CAP_MESSAGE, commit_history, git

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
commit_questions = importlib.import_module("commit_questions")
bm25 = importlib.import_module("bm25")


@pytest.fixture
def shop_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "shop"
    shutil.copytree(ROOT / "examples" / "shop", repo, ignore=shutil.ignore_patterns(".cg", "__pycache__"))
    return commit_history(repo)


def test_a_commit_becomes_its_message_and_the_definition_it_changed(shop_repo: Path) -> None:
    pairs = commit_questions.select(shop_repo)
    assert [p.gold for p in pairs] == [["shop.payments.retry.compute_backoff"]]
    assert pairs[0].question == CAP_MESSAGE.strip()  # the first commit has no parent: never a question


def test_chore_commits_and_test_only_changes_are_not_questions(shop_repo: Path) -> None:
    retry = shop_repo / "shop" / "payments" / "retry.py"
    retry.write_text(retry.read_text().replace("def is_retryable(", "def is_retryable(  ", 1))
    git(shop_repo, "commit", "-q", "-am", "Bump version to 1.4.0 for the release", when=1_770_000_000)
    test_file = next((shop_repo / "tests").rglob("test_*.py"))
    test_file.write_text(test_file.read_text() + "\n\ndef test_backoff_is_capped_at_three_days():\n    pass\n")
    git(shop_repo, "commit", "-q", "-am", "Check that the backoff stays capped", when=1_780_000_000)
    assert [p.question.splitlines()[0] for p in commit_questions.select(shop_repo)] == [CAP_MESSAGE.splitlines()[0]]


def test_a_changed_line_belongs_to_its_innermost_definition() -> None:
    source = (
        "class RetryPolicy:\n"  # 1
        "    attempts = 3\n"  # 2
        "\n"  # 3
        "    @staticmethod\n"  # 4
        "    def delay_for(attempt):\n"  # 5
        "        return 2 ** attempt\n"  # 6
    )
    defs = commit_questions.definitions(source, "shop.payments.retry")
    assert commit_questions.innermost(defs, 6, 6) == "shop.payments.retry.RetryPolicy.delay_for"
    assert commit_questions.innermost(defs, 4, 4) == "shop.payments.retry.RetryPolicy.delay_for"  # decorator
    assert commit_questions.innermost(defs, 2, 2) == "shop.payments.retry.RetryPolicy"
    assert commit_questions.innermost(defs, 7, 7) is None


def test_trailers_and_pull_request_numbers_leave_the_message() -> None:
    message = "Cap retry backoff (#412)\n\nLong retries annoy customers.\n\nCo-authored-by: Ana <ana@example.com>\n"
    assert commit_questions.clean_message(message) == "Cap retry backoff \n\nLong retries annoy customers."


def test_bm25_windows_find_a_definition_by_its_split_name() -> None:
    units = bm25.windows(ROOT / "examples" / "shop")
    index = bm25.BM25([w.text for w in units])
    # the camel-case spelling reaches the snake-case name through the joined token
    top = [units[i] for i in index.top("who calls SchedulePaymentRetry", 5)]
    assert "schedule_payment_retry" in top[0].text
    first = top[0]
    assert bm25.ranks(top, [(first.path, first.last, first.last + 40)]) == [1]  # overlapping its last line
    assert bm25.ranks(top, [("shop/payments/retry.py", 10_000, 10_001)]) == [None]


@pytest.mark.parametrize("name", ["marshmallow", "jinja2", "cobra", "httpx"])
def test_question_files_are_well_formed(name: str) -> None:
    path = BENCHMARKS / "questions" / f"{name}.yaml"
    questions = load_questions(path)
    assert len(questions) >= 20
    kinds = {q.kind for q in questions}
    assert kinds == {"flow", "location", "exact", "impact"}
    unanswerable = yaml.safe_load(path.read_text("utf-8")).get("unanswerable") or []
    if name != "httpx":  # httpx's set predates the unanswerable lists
        assert len(unanswerable) == 20
        ids = [u["id"] for u in unanswerable] + [q.id for q in questions]
        assert len(ids) == len(set(ids)) and all(u["question"].strip() for u in unanswerable)


def test_separate_runs_are_reported_together(shop_repo: Path, tmp_path: Path) -> None:
    pair = commit_questions.select(shop_repo)[0]
    pair.cg_ranks, pair.bm25_ranks = [2], [None]
    outcome = commit_questions.Outcome("shop at 1a2b3c4", [pair], 1, 0, 12.5)
    commit_questions.save_outcomes(tmp_path / "shop.jsonl", [outcome])
    (back,) = commit_questions.load_outcomes(tmp_path / "shop.jsonl")
    assert back == outcome
    assert commit_questions.score([p.cg_ranks for p in back.pairs]) == (1.0, 0.5)
    assert commit_questions.score([p.bm25_ranks for p in back.pairs]) == (0.0, 0.0)


def test_explain_is_scored_on_the_steps_it_shows_with_their_code() -> None:
    from cg.queries.evaluate import Gold
    from cg.queries.explain import Explanation, FlowNode

    explain_sets = importlib.import_module("explain_sets")
    scheduler = FlowNode(
        "shop/payments/retry.py::schedule_payment_retry",
        {"qualname": "shop.payments.retry.schedule_payment_retry", "kind": "function"},
        "seed",
        1.0,
        folded=[
            {"id": "shop/payments/retry.py::RetryPolicy.allows", "qualname": "shop.payments.retry.RetryPolicy.allows"}
        ],
        code="def schedule_payment_retry(...): ...",
        code_state="full",
    )
    dropped = FlowNode(  # in the flow, but the budget left its code out: not shown
        "shop/payments/retry.py::compute_backoff", {"qualname": "shop.payments.retry.compute_backoff"}, "callee", 0.5
    )
    flow = Explanation("how is a failed payment retried?", True, nodes={n.id: n for n in (scheduler, dropped)})
    flow.order = [scheduler.id, dropped.id]
    gold = [
        Gold("shop.payments.retry.schedule_payment_retry"),
        Gold("shop.payments.retry.RetryPolicy.allows"),  # folded into the scheduler's step
        Gold("shop.payments.retry.compute_backoff"),
        Gold("shop.payments.service.PaymentService.retry_failed_payment"),  # not in the flow
    ]
    recall, steps, _ = explain_sets.score(flow, gold)
    assert (recall, steps) == (0.5, 1)
