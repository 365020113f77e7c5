"""Localization questions mined from a real project's history, in the spirit of SWE-bench's
localization task: the question is a commit's message, the answer the library definitions that
commit changed, and the index the question is asked of is built from the code *before* the commit,
with history off, so neither the change nor its message is in the index.

Selection: first-parent, non-merge commits (the project squashes pull requests, so a main-line commit
is one change with its description) whose subject is 15-120 characters and is not chore work
(version bumps, releases, typo, lint, formatting, CI, docs); the message (subject and body, trailers
and pull-request numbers stripped, at most 800 characters) becomes the question. The changed
definitions are the innermost Python functions, methods or classes in library code (a package
folder, ``src/`` layout or not; tests, docs, benchmarks excluded) whose line range at the parent holds
a line the diff removes or changes, or that a pure insertion lands inside; parsed with the standard
library's ``ast`` at the parent (the sources are parsed, never run).
A commit is kept when it changes 1 to 3 definitions.

Indexing design (2 shared cores, a budget of about 20 minutes): indexing the parent of every commit
costs a cg run each (jedi and the embeddings of what changed: minutes per run on a loaded machine),
so the most recent ``--commits`` selected commits are cut into ``--snapshots`` consecutive groups
and each group is asked of one index, built at the parent of the group's *first* commit: an
ancestor of every parent in the group, so the answer is still absent from it. The snapshots are
indexed in order into one store, each run incremental (cg/ingest/freshness.py: only the files that
changed since the previous snapshot are parsed, resolved and embedded again). The price is a
staler index for the later commits of a group (the table reports how many commits behind each
question's parent its index is, on average); a gold definition missing from the snapshot's index
(added after it) is dropped, and a question left with none is dropped.

Scored: cg's search with its defaults (``Index.search``, what ``cg search`` ranks) and, side by side,
the plain BM25 baseline (benchmarks/bm25.py) over the snapshot's files; recall@10 and MRR (over the
first 10), overall and split by whether the message names a gold definition's own name.

    python benchmarks/commit_questions.py --repo ATTRS_CLONE --repo STARLETTE_CLONE --repo HTTPX_CLONE
    # (python-attrs/attrs, encode/starlette, encode/httpx: each squashes its pull requests; writes the
    # RESULTS.md section)
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bm25 import BM25, ranks, windows  # noqa: E402
from results import machine_line, write_section  # noqa: E402

from cg.api import open_index  # noqa: E402
from cg.ingest.walk import module_name  # noqa: E402
from cg.lexical import analyze  # noqa: E402
from cg.queries.query import Ranking  # noqa: E402

CHORE = re.compile(
    r"\b(bump|release[sd]?|releasing|version|typos?|changelog|newsfragments?|lint|pre-commit|black|ruff|"
    r"flake8|isort|mypy|pyright|pyupgrade|format(ting)?|prepare|revert|readme|copyright|coverage|ci|tox|"
    r"docs?|documentation|spelling|whitespace|style|sponsors?|typing|stubs?|pyi)\b",
    re.I,
)
TRAILER = re.compile(
    r"^((co-authored-by|signed-off-by|reviewed-by):.*|(fixes|fixed|closes|fix|refs?|see):?\s+(#|https?:)\S*\s*)$",
    re.I | re.M,
)
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", re.M)
LIBRARY = re.compile(r"^(src/)?[A-Za-z_][A-Za-z0-9_]*/[^ ]*\.py$")  # a package, src layout or not
NOT_LIBRARY = re.compile(r"^(src/)?(tests?|docs?|bench(marks)?|typing_tests|examples|scripts)/|/tests?/|conftest")
MAX_DEFS = 3
K = 10


@dataclass
class Pair:
    commit: str
    parent: str
    question: str
    gold: list[str]
    snapshot: str = ""
    behind: int = 0  # first-parent commits between the snapshot and the parent
    names_gold: bool = False
    cg_ranks: list[int | None] = field(default_factory=list)
    # the same search ranked by each fusion cg has (``fusion = "score"``, the hand-set weights, and
    # ``"learned"``, benchmarks/fit_ranker.py's model, fitted on the question sets, never on a commit)
    score_ranks: list[int | None] = field(default_factory=list)
    learned_ranks: list[int | None] = field(default_factory=list)
    bm25_ranks: list[int | None] = field(default_factory=list)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def clean_message(message: str) -> str:
    text = TRAILER.sub("", message)
    text = re.sub(r"\(#\d+\)|#\d+", "", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return text[:800]


def definitions(source: str, module: str) -> list[tuple[str, int, int, int]]:
    """(qualname, first line, last line, depth) of every function, method and class in ``source``."""
    out: list[tuple[str, int, int, int]] = []

    def visit(node: ast.AST, prefix: str, depth: int) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}.{child.name}"
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                out.append((name, first, child.end_lineno or child.lineno, depth))
                visit(child, name, depth + 1)
            elif not isinstance(child, ast.expr):
                visit(child, prefix, depth)

    visit(ast.parse(source), module, 0)
    return out


def innermost(defs: list[tuple[str, int, int, int]], lo: int, hi: int) -> str | None:
    """The deepest definition whose range holds lines ``lo``..``hi``."""
    holding = [d for d in defs if d[1] <= lo and hi <= d[2]]
    return max(holding, key=lambda d: d[3])[0] if holding else None


def changed_definitions(repo: Path, parent: str, commit: str, path: str) -> set[str] | None:
    """The definitions at ``parent`` that ``commit`` changes in ``path`` (None: not parseable there)."""
    try:
        source = git(repo, "show", f"{parent}:{path}")
        defs = definitions(source, module_name(path))
    except (subprocess.CalledProcessError, SyntaxError, ValueError):
        return None
    changed = set()
    for match in HUNK.finditer(git(repo, "diff", "-U0", parent, commit, "--", path)):
        start, count = int(match.group(1)), int(match.group(2) or "1")
        if count:  # lines removed or changed: each one's innermost definition
            for line in range(start, start + count):
                name = innermost(defs, line, line)
                if name:
                    changed.add(name)
        else:  # a pure insertion after line `start`: the definition it lands inside, if any
            name = innermost(defs, start, start + 1)
            if name:
                changed.add(name)
    return changed


def select(repo: Path) -> list[Pair]:
    log = git(repo, "log", "--first-parent", "--no-merges", "--reverse", "--format=%H%x1f%P%x1f%B%x1e", "HEAD")
    pairs = []
    for record in log.split("\x1e"):
        if not record.strip():
            continue
        sha, parents, message = record.strip("\n").split("\x1f", 2)
        subject = message.strip().splitlines()[0] if message.strip() else ""
        if len(parents.split()) != 1 or not 15 <= len(subject) <= 120 or CHORE.search(subject):
            continue
        parent = parents.split()[0]
        files = [
            f
            for f in git(repo, "diff", "--name-only", parent, sha).splitlines()
            if LIBRARY.match(f) and not NOT_LIBRARY.search(f)
        ]
        if not files or len(files) > 3:
            continue
        gold: set[str] = set()
        for path in files:
            changed = changed_definitions(repo, parent, sha, path)
            if changed:
                gold |= changed
        question = clean_message(message)
        if 1 <= len(gold) <= MAX_DEFS and analyze(question):  # words to look for (cg refuses an empty query)
            pairs.append(Pair(sha, parent, question, sorted(gold)))
    return pairs


def first_parent_positions(repo: Path) -> dict[str, int]:
    return {sha: i for i, sha in enumerate(git(repo, "rev-list", "--first-parent", "--reverse", "HEAD").split())}


def mean(values: list[float]) -> float:
    return statistics.mean(values) if values else 0.0


def score(rank_lists: list[list[int | None]]) -> tuple[float, float]:
    recall = mean([sum(1 for r in rs if r is not None and r <= K) / len(rs) for rs in rank_lists])
    rr = mean([1 / min(found) if (found := [r for r in rs if r is not None]) else 0.0 for rs in rank_lists])
    return recall, rr


@dataclass
class Outcome:
    label: str
    pairs: list[Pair]
    snapshots: int
    dropped: int
    indexing: float


def run(source: Path, commits: int, snapshots: int) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="cg-commits-") as tmp:
        work = Path(tmp) / "repo"
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(source), str(work)], check=True)
        label = f"{project_name(source)} at {git(work, 'rev-parse', '--short', 'HEAD').strip()}"
        pairs = select(work)[-commits:]
        positions = first_parent_positions(work)
        print(f"{label}: {len(pairs)} commits selected", flush=True)
        size = -(-len(pairs) // snapshots)
        groups = [pairs[i : i + size] for i in range(0, len(pairs), size)]
        kept: list[Pair] = []
        dropped_gold = 0
        index_seconds = 0.0
        if True:  # the index lives in the clone's own .cg folder, untracked, so checkouts keep it
            for group in groups:
                snapshot = group[0].parent
                git(work, "checkout", "-q", "-f", snapshot)
                t = time.perf_counter()
                with open_index(work, read_only=False, create=True, history_commits=0) as writer:
                    writer.index()
                index_seconds += time.perf_counter() - t
                with open_index(work, history_commits=0) as idx:
                    default = idx.ranking
                    units = windows(work)
                    bm25 = BM25([w.text for w in units])
                    for pair in group:
                        found = idx.cypher(
                            "MATCH (s:Symbol) WHERE s.qualname IN $names"
                            " RETURN s.qualname, s.path, s.start_line, s.end_line",
                            {"names": pair.gold},
                        ).rows
                        where = {row[0]: (row[1], int(row[2]), int(row[3])) for row in found}
                        dropped_gold += sum(1 for g in pair.gold if g not in where)
                        pair.gold = [g for g in pair.gold if g in where]
                        if not pair.gold:
                            continue
                        pair.snapshot = snapshot
                        pair.behind = positions.get(pair.parent, 0) - positions.get(snapshot, 0)
                        words = {w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", pair.question)}
                        pair.names_gold = any(g.rsplit(".", 1)[-1].lower() in words for g in pair.gold)
                        pair.cg_ranks = gold_ranks(idx, pair, default)
                        pair.score_ranks = gold_ranks(idx, pair, default.with_fusion("score"))
                        pair.learned_ranks = gold_ranks(idx, pair, default.with_fusion("learned"))
                        idx.ranking = default
                        top = [units[i] for i in bm25.top(pair.question, K)]
                        pair.bm25_ranks = ranks(top, [where[g] for g in pair.gold])
                        kept.append(pair)
                print(f"snapshot {snapshot[:10]}: {len(group)} commits, {time.perf_counter() - t:.0f}s", flush=True)
    return Outcome(label, kept, len(groups), dropped_gold, index_seconds)


def gold_ranks(idx, pair: Pair, ranking) -> list[int | None]:  # noqa: ANN001 - an open cg.api.Index
    """Where each gold definition of ``pair`` comes in the first K hits of ``cg search`` ranked by ``ranking``."""
    idx.ranking = ranking
    hits = [h.symbol.get("qualname") for h in idx.search(pair.question, limit=K).hits]
    return [next((r for r, q in enumerate(hits, 1) if q == g), None) for g in pair.gold]


def project_name(source: Path) -> str:
    """``owner+name/repo`` (a fetched snapshot), ``name.git`` or ``name``: the project's name."""
    name = source.resolve().parent.name if source.name in ("repo", ".git") else source.name
    return name.split("+")[-1].removesuffix(".git")


def save_outcomes(path: Path, outcomes: list[Outcome]) -> None:
    """JSON lines: each project's outcome, then its pairs with their ranks (read back by --combine)."""
    rows = []
    for o in outcomes:
        rows.append(json.dumps({"outcome": {**o.__dict__, "pairs": len(o.pairs)}}))
        rows += [json.dumps({"project": o.label, **p.__dict__}) for p in o.pairs]
    path.write_text("".join(row + "\n" for row in rows))


def load_outcomes(path: Path) -> list[Outcome]:
    """The outcomes an earlier run wrote with --out (its pairs with their ranks)."""
    outcomes: list[Outcome] = []
    for line in path.read_text("utf-8").splitlines():
        row = json.loads(line)
        if "outcome" in row:
            meta = row["outcome"]
            outcomes.append(Outcome(meta["label"], [], meta["snapshots"], meta["dropped"], meta["indexing"]))
        else:
            row.pop("project")
            outcomes[-1].pairs.append(Pair(**row))
    return outcomes


def report(outcomes: list[Outcome], wall: float) -> None:
    lines = [
        machine_line(),
        "",
        f"Questions: a commit's message; gold: the 1-{MAX_DEFS} library definitions it changed (first-parent,"
        " non-merge commits; selection and snapshot design in the script's docstring). Each group of"
        " commits is asked of one index (history off) built at the parent of the group's first commit.",
        "",
    ]
    for o in outcomes:
        lines.append(
            f"- {o.label}: {len(o.pairs)} questions over {o.snapshots} snapshot indexes, on average"
            f" {mean([p.behind for p in o.pairs]):.1f} commits behind the question's parent (max"
            f" {max((p.behind for p in o.pairs), default=0)}); {o.dropped} gold definitions absent from"
            f" their snapshot dropped; indexing {o.indexing:.0f}s."
        )
    lines += [
        *([f"- whole run {wall:.0f}s."] if wall else []),
        "",
        f"cg = `cg search` with its defaults (fusion = {Ranking.default().fusion!r}); score and learned: the"
        " same search with each fusion (the learned model was fitted on the question sets, never on a commit).",
        "",
        "| project | questions | n | cg recall@10 | cg MRR | score recall@10 | score MRR | learned recall@10"
        " | learned MRR | BM25 windows recall@10 | BM25 MRR |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    everything = [p for o in outcomes for p in o.pairs]
    for label, pairs in [*((o.label, o.pairs) for o in outcomes), ("all", everything)]:
        for subset_label, subset in (
            ("all", pairs),
            ("message names a gold definition", [p for p in pairs if p.names_gold]),
            ("message names none", [p for p in pairs if not p.names_gold]),
        ):
            cg_r, cg_m = score([p.cg_ranks for p in subset])
            sc_r, sc_m = score([p.score_ranks for p in subset])
            le_r, le_m = score([p.learned_ranks for p in subset])
            bm_r, bm_m = score([p.bm25_ranks for p in subset])
            lines.append(
                f"| {label} | {subset_label} | {len(subset)} | {cg_r:.3f} | {cg_m:.3f} | {sc_r:.3f} | {sc_m:.3f}"
                f" | {le_r:.3f} | {le_m:.3f} | {bm_r:.3f} | {bm_m:.3f} |"
            )
            print(label, subset_label, len(subset), f"cg {cg_r:.3f}/{cg_m:.3f} bm25 {bm_r:.3f}/{bm_m:.3f}", flush=True)
    write_section("Commit-mined localization (benchmarks/commit_questions.py)", "\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--repo", type=Path, action="append", default=[], help="a git clone or bare repository (repeatable)"
    )
    parser.add_argument("--commits", type=int, default=300, help="per project, the most recent selected commits")
    parser.add_argument("--snapshots", type=int, default=4, help="per project, indexes built (groups of commits)")
    parser.add_argument("--out", type=Path, help="write the pairs and their ranks here (JSON lines)")
    parser.add_argument(
        "--combine", type=Path, nargs="+", help="report the --out files of earlier runs together (no indexing)"
    )
    args = parser.parse_args()
    if args.combine:
        report([outcome for path in args.combine for outcome in load_outcomes(path)], 0.0)
        return
    if not args.repo:
        raise SystemExit("give --repo (one or more) or --combine")
    for repo in args.repo:
        if not (repo / ".git").exists() and not (repo / "HEAD").is_file():
            raise SystemExit(f"not a git repository: {repo}")
    started = time.perf_counter()
    outcomes = [run(repo, args.commits, args.snapshots) for repo in args.repo]
    if args.out:
        save_outcomes(args.out, outcomes)
    report(outcomes, time.perf_counter() - started)


if __name__ == "__main__":
    main()
