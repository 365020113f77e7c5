"""Each question set on its own: what ``cg search`` returns with its defaults (``Index.search``, the
ranking the settings give) against the plain BM25 baseline (benchmarks/bm25.py), recall@10 and MRR
overall and per kind, for every set in SETS. Used by ``python benchmarks/retrieval.py --sets``.

The sets are kept apart on purpose: shop and httpx are the sets the ranking was developed on, the
others (marshmallow, Jinja2, cobra) were written later by reading their source before cg was run on
them, so a change tuned on the first two shows on the others for what it is. A hit matches a gold
entry by qualified name (strict); the "class counts" MRR also lets the class that holds a gold method
count for it, the way a reader skimming the list would.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from bm25 import BM25, windows  # noqa: E402
from ingest import fetch_sdist  # noqa: E402
from languages import PROJECTS, fetch  # noqa: E402

from cg.api import open_index  # noqa: E402
from cg.queries.evaluate import KINDS, Question, load_questions  # noqa: E402
from cg.queries.query import Ranking  # noqa: E402

K = 10
QUESTIONS = HERE / "questions"


def _cobra() -> Path:
    return fetch(next(p for p in PROJECTS if p.name == "github.com/spf13/cobra"))


SETS: list[tuple[str, Callable[[], Path], Path]] = [
    ("examples/shop", lambda: ROOT / "examples" / "shop", ROOT / "examples" / "shop" / "QUESTIONS.yaml"),
    ("httpx 0.27.2", lambda: fetch_sdist("httpx", "0.27.2"), QUESTIONS / "httpx.yaml"),
    ("marshmallow 3.21.3", lambda: fetch_sdist("marshmallow", "3.21.3"), QUESTIONS / "marshmallow.yaml"),
    ("Jinja2 3.1.4", lambda: fetch_sdist("Jinja2", "3.1.4"), QUESTIONS / "jinja2.yaml"),
    ("cobra v1.8.1 (Go)", _cobra, QUESTIONS / "cobra.yaml"),
]


@dataclass
class Scored:
    question: Question
    cg: list[int | None]  # rank of each gold entry in cg's first K (None: absent)
    cg_class: int | None  # rank of the first hit that is a gold entry or the class holding one
    bm25: list[int | None]


SAVED = HERE / "data" / "question-set-scores"


def save_scores(question_file: Path, rows: list[Scored], unanswerable: int) -> None:
    """One set's scores (per question: cg's and BM25's gold ranks) under benchmarks/data/ (not committed)."""
    SAVED.mkdir(parents=True, exist_ok=True)
    data = {
        "questions_sha": hashlib.sha256(question_file.read_bytes()).hexdigest(),
        "unanswerable": unanswerable,
        "rows": [{"id": r.question.id, "cg": r.cg, "cg_class": r.cg_class, "bm25": r.bm25} for r in rows],
    }
    (SAVED / f"{question_file.stem}.json").write_text(json.dumps(data))


def load_scores(question_file: Path) -> tuple[list[Scored], int] | None:
    """The saved scores of a set, unless its question file changed since they were measured."""
    path = SAVED / f"{question_file.stem}.json"
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    if data["questions_sha"] != hashlib.sha256(question_file.read_bytes()).hexdigest():
        return None
    by_id = {q.id: q for q in load_questions(question_file)}
    rows = [Scored(by_id[r["id"]], r["cg"], r["cg_class"], r["bm25"]) for r in data["rows"]]
    return rows, int(data["unanswerable"])


def _rr(ranks: list[int | None]) -> float:
    found = [r for r in ranks if r is not None]
    return 1 / min(found) if found else 0.0


def summary(rows: list[Scored]) -> dict[str, float]:
    if not rows:
        return {"n": 0}
    return {
        "n": len(rows),
        "cg_recall": statistics.mean(sum(r is not None for r in s.cg) / len(s.cg) for s in rows),
        "cg_mrr": statistics.mean(_rr(s.cg) for s in rows),
        "cg_class_mrr": statistics.mean(_rr([s.cg_class]) for s in rows),
        "bm25_recall": statistics.mean(sum(r is not None for r in s.bm25) / len(s.bm25) for s in rows),
        "bm25_mrr": statistics.mean(_rr(s.bm25) for s in rows),
    }


def _matches(gold_name: str, hit: dict[str, Any], containers: bool) -> bool:
    name = hit.get("qualname") or ""
    if gold_name in (name, hit.get("id")):
        return True
    return containers and hit.get("kind") in ("class", "struct") and gold_name.startswith(name + ".")


def score_set(repo: Path, question_file: Path, work: Path, ranking: Ranking | None = None) -> tuple[list[Scored], int]:
    """Index a copy of ``repo`` (history off) and score every question; also the unanswerable count."""
    return score_index(index_set(repo, question_file, work), question_file, ranking)


def index_set(repo: Path, question_file: Path, work: Path) -> Path:
    """A copy of ``repo`` under ``work``, indexed with history off (kept when it is there already)."""
    copy = work / question_file.stem
    if not (copy / ".cg").is_dir():
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(".cg", "__pycache__", ".git"))
        with open_index(copy, read_only=False, create=True, history_commits=0) as writer:
            writer.index()
    return copy


def unanswerable_count(question_file: Path) -> int:
    import yaml

    return len((yaml.safe_load(question_file.read_text("utf-8")) or {}).get("unanswerable") or [])


def asked(question: Question, hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The hits a question is scored on: the question file's own sections are its answer key, never
    a hit (shop keeps it in the repository)."""
    return [h for h in hits if not question.source.endswith("/" + str(h.get("path")))]


def score_index(copy: Path, question_file: Path, ranking: Ranking | None = None) -> tuple[list[Scored], int]:
    """Every question of ``question_file`` asked of the indexed ``copy`` (cg with ``ranking``, the
    settings' default when None) and of BM25 over its windows; also the unanswerable count."""
    questions = load_questions(question_file)
    units = windows(copy)
    bm25 = BM25([w.text for w in units])
    rows = []
    with open_index(copy, history_commits=0) as idx:
        if ranking is not None:
            idx.ranking = ranking
        names = sorted({g.name for q in questions for g in q.gold if g.name})
        found = idx.cypher(
            "MATCH (s:Symbol) WHERE s.qualname IN $names RETURN s.qualname, s.path, s.start_line, s.end_line",
            {"names": names},
        ).rows
        where: dict[str, tuple[str, int, int]] = {}
        for name, path, lo, hi in found:
            where.setdefault(name, (path, int(lo), int(hi)))
        for q in questions:
            hits = asked(q, [h.symbol for h in idx.search(q.question, limit=K + 3).hits])[:K]
            cg = [next((i for i, h in enumerate(hits, 1) if gold_hit(g, h, False)), None) for g in q.gold]
            cg_class = next((i for i, h in enumerate(hits, 1) if any(gold_hit(g, h, True) for g in q.gold)), None)
            top = [units[i] for i in bm25.top(q.question, K)]
            spans = [where.get(g.name, ("", 0, 0)) if g.name else (g.path, *g.lines) for g in q.gold]
            ranked = [next((r for r, w in enumerate(top, 1) if w.overlaps(*span)), None) for span in spans]
            rows.append(Scored(q, cg, cg_class, ranked))
    return rows, unanswerable_count(question_file)


def gold_hit(gold: Any, hit: dict[str, Any], containers: bool) -> bool:
    if gold.name:
        return _matches(gold.name, hit, containers)
    return gold.matches(hit)


def report(results: list[tuple[str, list[Scored], int]]) -> list[str]:
    lines = [
        "cg = `cg search` with its defaults (strict: the hit is the gold definition; class counts: the class",
        "holding a gold method counts too); BM25 = Okapi BM25 over 1,000-character windows with identifier",
        f"splitting (benchmarks/bm25.py), a window counting for the gold definition it overlaps. recall@{K} and",
        f"MRR over the first {K}. Unanswerable questions are listed in each file for the refusal measurement.",
        "",
        "| set | kind | n | cg recall@10 | cg MRR | cg MRR (class counts) | BM25 recall@10 | BM25 MRR |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, rows, _ in results:
        groups = [(kind, [r for r in rows if r.question.kind == kind]) for kind in KINDS]
        for kind, subset in [*((k, s) for k, s in groups if s), ("**all**", rows)]:
            s = summary(subset)
            lines.append(
                f"| {label} | {kind} | {s['n']} | {s['cg_recall']:.3f} | {s['cg_mrr']:.3f} |"
                f" {s['cg_class_mrr']:.3f} | {s['bm25_recall']:.3f} | {s['bm25_mrr']:.3f} |"
            )
    unseen = [r for label, rows, _ in results if label.split()[0] not in ("examples/shop", "httpx") for r in rows]
    if unseen:
        s = summary(unseen)
        lines.append(
            f"| sets written for issue 16 (not tuned on) | **all** | {s['n']} | {s['cg_recall']:.3f} |"
            f" {s['cg_mrr']:.3f} | {s['cg_class_mrr']:.3f} | {s['bm25_recall']:.3f} | {s['bm25_mrr']:.3f} |"
        )
    lines += ["", "Unanswerable questions per set: " + ", ".join(f"{label} {n}" for label, _, n in results) + "."]
    return lines
