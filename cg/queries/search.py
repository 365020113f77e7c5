"""Hybrid search: the lexical arm (full-text over analyzed identifiers) and the dense arm (cosine over
definition embeddings), fused into one ranking.

Fusion (``fusion`` in config). The default, ``score``, is a weighted sum of each arm's normalised
score: BM25 divided by the best BM25 of the query (BM25 has a natural zero: no shared term), cosine
rescaled so that the best candidate is 1 and the last of the arm's candidate pool (its 50th) is 0.
``rrf`` is Reciprocal Rank Fusion (``weight / (k + rank)`` per arm, ``k = 60`` as in the RRF paper),
which needs no calibration but throws the scores away: a definition that is a clear first in one arm
and absent from the other ties with one that is a mediocre tenth in both. Measured with `cg eval` on
both question sets (benchmarks/RESULTS.md shows both rows): score fusion raised recall@10 and MRR on
both, and stayed ahead for lexical shares from 0.4 to 0.6, so the equal default weights are not tuned
to the question sets. Bruch et al. ("An Analysis of Fusion Functions for Hybrid Retrieval", 2023)
found the same: a convex combination of normalised scores beats RRF in and out of domain.

The backends only generate candidates; cg ranks them, so both backends give the same answer. Kùzu's
and Lucene's BM25 differ in their constants and length norms, and Neo4j's vector index is
approximate (HNSW) where Kùzu's scan is exact: left alone, the same index gives different seeds on
the two stores. So the lexical arm re-scores its pool with one BM25 (k1 = 1.2, b = 0.75) whose
document frequencies come from the pool itself, which is exact because the pool is every document
matching any query term (the backend's OR query) unless it hits ``LEXICAL_POOL``; N and the average
length come from the index's metadata. The dense arm re-scores its pool with the exact cosine of
the stored vectors, and a lexical candidate outside that pool gets its own exact cosine too.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from cg.embed import Embedder
from cg.graph.store import GraphReader
from cg.lexical import analyze, split_identifier
from cg.model import CONTAINER_KINDS, ResolvedBy, edge_rank
from cg.queries.expand import expand
from cg.queries.lookup import STUB_LINES, citation, is_example, is_stub, is_test
from cg.queries.query import Query, Ranking
from cg.queries.unwrap import for_answers

CANDIDATES = 50  # per arm, into fusion
PRIOR_POOL = 80  # fused candidates re-weighted by their kind before the cut
GRAPH_SEEDS = 5  # the fused hits whose direct callers and callees the graph arm lifts
LEXICAL_POOL = 300  # full-text candidates re-scored by cg's BM25
BM25_K1, BM25_B = 1.2, 0.75
PHRASE_COVERAGE = 0.6  # share of a quoted phrase's words that one string literal must hold, in order
IMPACT_DEPTH, IMPACT_FANOUT = 2, 12  # how far and how wide an impact question's callers are walked


@dataclass
class Hit:
    id: str
    score: float
    symbol: dict[str, Any]
    ranks: dict[str, int] = field(default_factory=dict)  # arm -> 1-based rank
    repo: str | None = None  # the repository's key, in a search across all of them

    def as_dict(self, with_text: bool = False) -> dict[str, Any]:
        keys = ("qualname", "kind", "path", "start_line", "end_line", "signature", "docstring")
        data = {
            **({"repo": self.repo} if self.repo is not None else {}),
            "id": self.id,
            **{k: self.symbol.get(k) for k in keys},
            "score": round(self.score, 6),
            "ranks": self.ranks,
        }
        if with_text:
            data["text"] = self.symbol.get("text")
        return data


@dataclass(frozen=True)
class SearchResult:
    """The answer to ``cg search``: the hits for the query, best first."""

    query: Query
    hits: list[Hit]

    def as_dict(self) -> list[dict[str, Any]]:
        return [h.as_dict() for h in self.hits]


def render_hits(result: SearchResult) -> str:
    """One numbered line per hit (score, name, kind, citation) and the first line of its docstring."""
    if not result.hits:
        return "no matches"
    lines = []
    for n, h in enumerate(result.hits, 1):
        s = h.symbol
        where = f"[{h.repo}] " if h.repo is not None else ""
        lines.append(f"{n:>2}. {h.score:.4f}  {where}{s['qualname']} ({s['kind']}) {citation(s)}")
        if s.get("docstring"):
            lines.append(f"      {s['docstring'].splitlines()[0]}")
    return "\n".join(lines)


def rrf(arms: dict[str, list[str]], weights: Mapping[str, float], k: int) -> list[tuple[str, float, dict[str, int]]]:
    scores: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    for arm, ids in arms.items():
        for rank, doc in enumerate(ids, start=1):
            scores[doc] = scores.get(doc, 0.0) + weights.get(arm, 1.0) / (k + rank)
            ranks.setdefault(doc, {})[arm] = rank
    ordered = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    return [(doc, score, ranks[doc]) for doc, score in ordered]


def _owner_scores(store: GraphReader, scored: dict[tuple[str, str], float]) -> dict[str, float]:
    """Symbol id -> its best score over itself and its chunks (a fragment hit counts for the
    definition it belongs to)."""
    owners = store.chunk_owners([doc for label, doc in scored if label == "Chunk"])
    best: dict[str, float] = {}
    for (label, doc), score in scored.items():
        owner = doc if label == "Symbol" else owners.get(doc)
        if owner and score > best.get(owner, float("-inf")):
            best[owner] = score
    return best


def _ordered(scores: dict[str, float]) -> list[str]:
    """Ids best first, ties by id."""
    return [doc for doc, _ in sorted(scores.items(), key=lambda kv: (-round(kv[1], 9), kv[0]))]


def lexical_scores(store: GraphReader, query: Query) -> dict[str, float]:
    """Definition id -> cg's BM25 over the full-text candidates (see the module docstring), the
    question's terms and the short forms of its words (``Query.expansions``)."""
    return _owner_scores(store, bm25(store, query.terms + query.expansions, ("Symbol", "Chunk"), "lexical"))


def lexical_ranking(store: GraphReader, query: Query) -> list[str]:
    """Full-text candidates (definitions and chunks) ranked by cg's BM25."""
    return _ordered(lexical_scores(store, query))


def bm25(
    store: GraphReader, query_terms: Sequence[str], labels: tuple[str, ...], stats: str
) -> dict[tuple[str, str], float]:
    """cg's BM25 of ``query_terms`` (a Query's analysed terms) over the full-text pool of ``labels``; N
    and the average length come from the index metadata ``{stats}_docs`` / ``{stats}_avgdl`` (the
    pool's own when absent)."""
    terms = Counter(query_terms)
    if not terms:
        return {}
    docs: dict[tuple[str, str], Counter] = {}
    for label in labels:
        pool = [doc for doc, _ in store.fulltext(" ".join(terms), LEXICAL_POOL, label)]
        docs.update({(label, doc): Counter(text.split()) for doc, text in store.lexical_docs(pool, label).items()})
    if not docs:
        return {}
    total = max(int(store.get_meta(f"{stats}_docs") or 0), len(docs))
    avgdl = float(store.get_meta(f"{stats}_avgdl") or 0.0) or sum(sum(c.values()) for c in docs.values()) / len(docs)
    df = {t: sum(1 for c in docs.values() if t in c) for t in terms}
    scores: dict[tuple[str, str], float] = {}
    for key, counts in docs.items():
        length = sum(counts.values())
        score = 0.0
        for term, q_count in terms.items():
            tf = counts.get(term, 0)
            if not tf:
                continue
            idf = math.log(1 + (total - df[term] + 0.5) / (df[term] + 0.5))
            score += q_count * idf * tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * length / avgdl))
        scores[key] = score
    return scores


def vector_scores(
    store: GraphReader, embedding, sources=(("Symbol", "embedding"), ("Chunk", "embedding"))
) -> dict[str, float]:
    """Definition id -> the exact cosine of its best stored vector among the vector candidates of
    ``sources``, (label, property) pairs: code by default, ``(("Symbol", "doc_embedding"),)`` for
    docstrings."""
    query = embedding.astype("float32")
    scored: dict[tuple[str, str], float] = {}
    for label, prop in sources:
        pool = [doc for doc, _ in store.vector(embedding, CANDIDATES, label, prop)]
        for doc, vec in store.embeddings(pool, label, prop).items():
            scored[(label, doc)] = round(float(vec @ query), 6)  # unit vectors: dot = cosine
    return _owner_scores(store, scored)


def vector_ranking(
    store: GraphReader, embedding, sources=(("Symbol", "embedding"), ("Chunk", "embedding"))
) -> list[str]:
    """Vector candidates ranked by the exact cosine of their stored vectors."""
    return _ordered(vector_scores(store, embedding, sources))


def arm_shares(
    arms: dict[str, dict[str, float]], floors: dict[str, float] | None = None
) -> dict[str, dict[str, float]]:
    """Each arm's scores normalised: ``(score - floor) / (best - floor)``, clipped at 0, with ``floor``
    0 unless given (the cosine arms pass their pool's last score); an arm whose scores are all equal
    gives 0 to each."""
    floors = floors or {}
    shares: dict[str, dict[str, float]] = {}
    for arm, scores in arms.items():
        if not scores:
            continue
        floor = floors.get(arm, 0.0)
        span = max(scores.values()) - floor
        shares[arm] = {doc: max(0.0, (score - floor) / span) if span > 0 else 0.0 for doc, score in scores.items()}
    return shares


def score_fusion(
    arms: dict[str, dict[str, float]], weights: Mapping[str, float], floors: dict[str, float] | None = None
) -> list[tuple[str, float, dict[str, int]]]:
    """Weighted sum of each arm's normalised score (``arm_shares``). A candidate an arm did not score
    gets 0 from it. ``ranks`` records each arm's 1-based rank, as RRF does."""
    fused: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    for arm, shares in arm_shares(arms, floors).items():
        for rank, doc in enumerate(_ordered(arms[arm]), start=1):
            ranks.setdefault(doc, {})[arm] = rank
            fused[doc] = fused.get(doc, 0.0) + weights.get(arm, 1.0) * shares[doc]
    ordered = sorted(fused.items(), key=lambda kv: (-round(kv[1], 9), kv[0]))
    return [(doc, round(score, 9), ranks[doc]) for doc, score in ordered]


DOCSTRINGS = (("Symbol", "doc_embedding"),)


def search(
    store: GraphReader,
    embedder: Embedder,
    query: Query | str,
    limit: int = 10,
    *,
    ranking: Ranking | None = None,
    kinds: tuple[str, ...] | None = None,
) -> list[Hit]:
    """The ``limit`` best definitions for ``query``: both arms fused, the graph arm, then the priors
    (or, with ``fusion = "learned"``, the learned combination of every feature, ``rank_features``),
    and the definitions the query names exactly pinned first; ``ranking`` defaults to the settings'
    defaults."""
    store = for_answers(store)  # the arms, the graph arm and the pins ask about the same definitions
    query = Query.of(query).with_vector(embedder)
    ranking = ranking or Ranking.default()
    pool, symbols, features, literals = candidates(store, query, limit, ranking)
    if features is not None and ranking.model:
        pool = learned_order(pool, features, ranking.model)
    else:
        pool = apply_priors(query, pool, symbols, ranking.priors)
    fused = _pin_exact(store, query, pool, symbols, _config_answers(store, query, symbols))
    fused = _pin_literals(store, query, fused, symbols, literals)
    if query.intent == "impact":
        fused = _impact_first(store, query, fused, symbols)
    hits: list[Hit] = []
    missing = [doc for doc, _, _ in fused if doc not in symbols]
    symbols.update(store.symbols(missing, with_text=False))
    seen: set[tuple[str, str]] = set()
    for doc, score, ranks in fused:
        sym = symbols.get(doc)
        if sym is None or (kinds and sym["kind"] not in kinds):
            continue
        same = (sym["path"], sym["qualname"])  # a property's getter and setter, overloads, if/else twins
        if same in seen:
            continue
        seen.add(same)
        hits.append(Hit(doc, score, sym, ranks))
        if len(hits) >= limit:
            break
    return hits


Candidates = tuple[
    list[tuple[str, float, dict[str, int]]],  # the fused pool, best first
    dict[str, dict[str, Any]],  # its definitions' summaries
    dict[str, dict[str, float]] | None,  # id -> features (score fusion only)
    dict[str, float] | None,  # the string-literal matches (score fusion only)
]


def candidates(
    store: GraphReader, query: Query, limit: int, ranking: Ranking, with_features: bool = False
) -> Candidates:
    """The pool the ranking orders: the arms fused (score or RRF) and the graph arm, the first
    ``max(3 * limit, PRIOR_POOL)``, and each candidate's features (``rank_features``) when the ranking
    has a learned model or ``with_features`` asks (benchmarks/fit_ranker.py): the hand-set ranking
    does not pay for them."""
    weights = ranking.weights
    arms = {
        "lexical": lexical_scores(store, query),
        "vector": vector_scores(store, query.embedding),
        "doc": vector_scores(store, query.embedding, DOCSTRINGS) if weights.get("doc", 0.0) > 0 else {},
    }
    arms = {
        arm: scores if arm == "lexical" and ranking.fusion != "rrf" else _top(scores, CANDIDATES)
        for arm, scores in arms.items()
        if weights.get(arm, 1.0) > 0
    }
    shares: dict[str, dict[str, float]] | None = None
    if ranking.fusion == "rrf":
        fused = rrf({arm: _ordered(scores) for arm, scores in arms.items()}, weights, ranking.rrf_k)
    else:
        floors = {arm: min(scores.values()) for arm, scores in arms.items() if arm != "lexical" and scores}
        _complete_cosines(store, query.embedding, arms)
        shares = arm_shares(arms, floors)
        fused = score_fusion(arms, weights, floors)
    lift: dict[str, float] = {}
    if weights.get("graph", 0.0) > 0:
        lift = graph_lift(store, fused)
        fused = propagate(store, fused, weights["graph"])
    pool = fused[: max(limit * 3, PRIOR_POOL)]
    if shares is None or not (ranking.model or with_features):
        return pool, store.symbols([doc for doc, _, _ in pool], with_text=False), None, None
    literals = literal_matches(store, query)
    inside = {doc for doc, _, _ in pool}
    pool += [(doc, 0.0, {}) for doc in sorted(literals) if doc not in inside]  # a partial match still competes
    symbols = store.symbols([doc for doc, _, _ in pool], with_text=False)
    best = max((score for _, score, _ in fused[:1]), default=0.0) or 1.0
    lift = {doc: value / best for doc, value in lift.items()}
    return pool, symbols, rank_features(store, query, pool, symbols, shares, lift, literals, ranking.priors), literals


# What the learned ranking weighs, per candidate (``rank_features``); every one is 0 when it does not
# apply. The arms' normalised scores, the hand-set ranking's score (score fusion, the graph arm and
# the priors' factors, as a share of its first hit's; its priors multiply, which a sum cannot), the
# graph arm's lift, the string-literal match; the priors as
# flags; and the graph around the candidate: how many definitions call it (log), how many of the first
# LINK_HITS fused hits it calls or is called by, whether it sits between two of them (called by one,
# calling another: a link in the chain a flow question asks about), and the confidence of the most
# trusted edge joining it to one of them (cg.model.ResolvedBy); and whether it is a stub (an abstract
# method, ``raise NotImplementedError``: cg.queries.lookup.is_stub), which shares the words of the
# question with the method that overrides it and does the work.
FEATURES = (
    "lexical",
    "vector",
    "fused",
    "graph",
    "literal",
    "test",
    "example",
    "module",
    "container",
    "class",
    "other_side",
    "callers",
    "linked",
    "between",
    "link_confidence",
    "stub",
)
LINK_HITS = 10


def rank_features(
    store: GraphReader,
    query: Query,
    pool: list[tuple[str, float, dict[str, int]]],
    symbols: dict[str, dict[str, Any]],
    shares: dict[str, dict[str, float]],
    lift: dict[str, float],
    literals: dict[str, float],
    priors: Mapping[str, float],
) -> dict[str, dict[str, float]]:
    """Definition id -> its FEATURES, for every candidate in ``pool`` (fused best first)."""
    ids = [doc for doc, _, _ in pool]
    hits = set(ids[:LINK_HITS])
    callers = store.caller_counts(ids)
    calls_hit: dict[str, set[str]] = {}  # candidate -> the hits it calls
    called_by_hit: dict[str, set[str]] = {}  # candidate -> the hits that call it
    confidence: dict[str, float] = {}
    for row in store.calls(list(hits), "out"):  # hit -> candidate, and candidate -> hit when both are hits
        if row.dst in hits or row.dst in symbols:
            called_by_hit.setdefault(row.dst, set()).add(row.src)
            calls_hit.setdefault(row.src, set()).add(row.dst)
            edge = _edge_confidence(row.resolved_by)
            for end in (row.src, row.dst):
                confidence[end] = max(confidence.get(end, 0.0), edge)
    for row in store.calls(list(hits), "in"):  # candidate -> hit
        if row.src in symbols and row.src not in hits:
            calls_hit.setdefault(row.src, set()).add(row.dst)
            confidence[row.src] = max(confidence.get(row.src, 0.0), _edge_confidence(row.resolved_by))
    short = [
        doc
        for doc in ids
        if (symbols.get(doc) or {}).get("kind") in ("function", "method")
        and int(symbols[doc].get("end_line") or 0) - int(symbols[doc].get("start_line") or 0) < STUB_LINES
    ]
    stubs = {doc for doc, node in store.symbols(short, with_text=True).items() if is_stub(node)}
    ranked = apply_priors(query, pool, symbols, priors)  # the hand-set ranking's score, the first's = 1
    top = max((score for _, score, _ in ranked[:1]), default=0.0) or 1.0
    fused = {doc: max(score, 0.0) / top for doc, score, _ in ranked}
    out: dict[str, dict[str, float]] = {}
    for doc in ids:
        sym = symbols.get(doc) or {}
        lexical = shares.get("lexical", {}).get(doc, 0.0)
        vector = shares.get("vector", {}).get(doc, 0.0)
        up, down = called_by_hit.get(doc, set()) - {doc}, calls_hit.get(doc, set()) - {doc}
        test = bool(sym) and not query.about_tests and is_test(sym)
        kind = sym.get("kind")
        container = kind == "class" and any(other.startswith(doc + ".") for other in ids)
        out[doc] = {
            "lexical": lexical,
            "vector": vector,
            "fused": fused.get(doc, 0.0),
            "graph": lift.get(doc, 0.0),
            "literal": literals.get(doc, 0.0),
            "test": float(test),
            "example": float(bool(sym) and not test and is_example(sym)),
            "module": float(kind in ("module", "config")),
            "container": float(container),
            "class": float(kind in ("class", "struct", "interface") and not container),
            "other_side": float(bool(sym) and query.async_side is not None and is_async(sym) != query.async_side),
            "callers": math.log1p(callers.get(doc, 0)),
            "linked": min(len(up | down), 3) / 3,
            "between": float(bool(up) and bool(down) and up != down),
            "link_confidence": confidence.get(doc, 0.0) if up | down else 0.0,
            "stub": float(doc in stubs),
        }
    return out


def _edge_confidence(resolved_by: str) -> float:
    try:
        return ResolvedBy(resolved_by).confidence
    except ValueError:
        return 0.5


def learned_score(features: Mapping[str, float], model: Mapping[str, Any]) -> float:
    """The learned model's score of a candidate: the weighted sum of its features (weights written
    by benchmarks/fit_ranker.py). Fitted pairwise, the difference of two candidates' scores is the
    log-odds that the first is the better answer."""
    coef = model["coef"]
    return float(model.get("intercept", 0.0)) + sum(
        float(coef.get(name, 0.0)) * value for name, value in features.items()
    )


def learned_order(
    pool: list[tuple[str, float, dict[str, int]]], features: dict[str, dict[str, float]], model: Mapping[str, Any]
) -> list[tuple[str, float, dict[str, int]]]:
    """The pool re-scored by ``learned_score``, best first (ties by id). A hit's score is
    ``exp(its score - the best's)``: the odds that it is a better answer than the first hit, 1 for the
    first, so that explain can weigh its seeds by their share of the first's, as it does with score
    fusion's scores."""
    if not pool:
        return pool
    raw = {doc: learned_score(features[doc], model) for doc, _, _ in pool}
    best = max(raw.values())
    scored = [(doc, round(math.exp(max(raw[doc] - best, -60.0)), 9), ranks) for doc, _, ranks in pool]
    return sorted(scored, key=lambda item: (-item[1], -raw[item[0]], item[0]))


def propagate(
    store: GraphReader, fused: list[tuple[str, float, dict[str, int]]], weight: float, seeds: int = GRAPH_SEEDS
) -> list[tuple[str, float, dict[str, int]]]:
    """The graph arm: each direct caller or callee (in the repository, not a test) of the first
    ``seeds`` fused hits gains ``weight`` times the best score among the seeds it is next to.

    A flow question's answer is a chain: the handler the question names and the functions it calls
    ("what happens after a charge fails" is ``charge_invoice`` and the ``schedule_payment_retry`` it
    calls). The text arms score each link alone, and a link whose own words are far from the
    question's (``has_redirect_location`` for "keep looping over 3xx responses") falls behind
    unrelated definitions that share words. A neighbour of a strong hit is lifted by a share of that
    hit's score, added to its own, so a neighbour that is also relevant on its own rises most and a
    hub of unrelated helpers gains little (the best seed counts, not the number of seeds). Measured
    with `cg eval` on both question sets (benchmarks/RESULTS.md): recall@5 and recall@10 rose on both
    for weights from 0.1 to 0.3 and 3 to 10 seeds; ``weight_graph`` in config, 0 turns it off."""
    scores = {doc: score for doc, score, _ in fused}
    ranks = {doc: dict(r) for doc, _, r in fused}
    lift = graph_lift(store, fused, seeds)
    for rank, doc in enumerate(_ordered(lift), start=1):
        scores[doc] = scores.get(doc, 0.0) + weight * lift[doc]
        ranks.setdefault(doc, {})["graph"] = rank
    ordered = sorted(scores.items(), key=lambda kv: (-round(kv[1], 9), kv[0]))
    return [(doc, round(score, 9), ranks.get(doc, {})) for doc, score in ordered]


def graph_lift(
    store: GraphReader, fused: list[tuple[str, float, dict[str, int]]], seeds: int = GRAPH_SEEDS
) -> dict[str, float]:
    """Each direct caller or callee (in the repository, not a test) of the first ``seeds`` fused hits
    -> the best fused score among the seeds it is next to (``propagate``'s lift)."""
    scores = {doc: score for doc, score, _ in fused[:seeds]}
    lift: dict[str, float] = {}
    for direction in ("out", "in"):
        for row in store.calls(list(scores), direction):
            origin, other = (row.src, row.dst) if direction == "out" else (row.dst, row.src)
            if row.other_label != "Symbol" or other == origin or is_test(row.other):
                continue
            lift[other] = max(lift.get(other, 0.0), scores[origin])
    return lift


def _top(scores: dict[str, float], count: int) -> dict[str, float]:
    return {doc: scores[doc] for doc in _ordered(scores)[:count]}


def _complete_cosines(store: GraphReader, query_vector, arms: dict[str, dict[str, float]]) -> None:
    """Give the lexical candidates outside a cosine arm's pool their exact cosine in that arm, so that
    score fusion does not count a close-but-not-top-50 vector as 0."""
    query = query_vector.astype("float32")
    props = {"vector": "embedding", "doc": "doc_embedding"}
    for arm, prop in props.items():
        if arm not in arms or "lexical" not in arms:
            continue
        missing = [doc for doc in arms["lexical"] if doc not in arms[arm]]
        for doc, vec in store.embeddings(missing, "Symbol", prop).items():
            arms[arm][doc] = round(float(vec @ query), 6)


def _config_answers(store: GraphReader, query: Query, symbols: dict[str, dict[str, Any]]) -> set[str]:
    """Config sections that set a key the query is written as (``STRIPE_WEBHOOK_SECRET: ...``,
    ``KEY = value``, ``ENV KEY``): exact answers, pinned like a definition of that name. A section that
    only mentions it (a question file, a ``${KEY}`` reference) is ranked like any other config text."""
    tokens = [t for t in query.identifiers if len(split_identifier(t)) > 1]
    config = [doc for doc, sym in symbols.items() if sym.get("kind") == "config"]
    if not tokens or not config:
        return set()
    wanted = {_joined(t) for t in tokens}
    mentions = sorted(doc for doc, text in store.lexical_docs(config).items() if wanted & set(text.split()))
    keys = [re.compile(rf"(?:^|[\s\"'{{,])(?:ENV\s+|ARG\s+)?{re.escape(t)}[\"']?\s*[:=]", re.M) for t in tokens]
    texts = store.symbols(mentions, with_text=True) if mentions else {}
    return {doc for doc, sym in texts.items() if any(k.search(sym.get("text") or "") for k in keys)}


def apply_priors(
    query: Query | str,
    fused: list[tuple[str, float, dict[str, int]]],
    symbols: dict[str, dict[str, Any]],
    priors: Mapping[str, float],
) -> list[tuple[str, float, dict[str, int]]]:
    """Scale fused scores by what kind of definition a hit is. Users asking how something works want
    the function that does it: a test (unless the question is about tests), a whole module, or a
    class whose own methods are also among the hits is usually a worse answer than those methods;
    code in examples, tutorials and docs folders shows how to use the library, not how it works,
    and counts like a test.
    A config section counts like a module's loose code. A question that names one side of a
    sync/async API (httpx's ``Client`` and ``AsyncClient``, ``iter_bytes`` and ``aiter_bytes``) wants
    that side: the other side's twins count less. Measured with `cg eval` (benchmarks/RESULTS.md);
    the factors are in config."""
    query = Query.of(query)
    ids = {doc for doc, _, _ in fused}
    side = query.async_side
    out = []
    for doc, score, ranks in fused:
        sym = symbols.get(doc)
        if sym is not None:
            if not query.about_tests and is_test(sym):
                score *= priors["tests"]
            elif is_example(sym):
                score *= priors.get("examples", 1.0)
            if sym["kind"] in ("module", "config"):  # a module's loose code, a config section: not definitions
                score *= priors["modules"]
            elif sym["kind"] == "class" and any(other.startswith(doc + ".") for other in ids):
                score *= priors["containers"]
            if side is not None and is_async(sym) != side:
                score *= priors.get("sync_async", 1.0)
        out.append((doc, score, ranks))
    return sorted(out, key=lambda item: (-item[1], item[0]))


def is_async(sym: dict[str, Any]) -> bool:
    """An async definition: declared ``async`` (Python, JavaScript), or named so, by itself or by its
    class (``AsyncClient.send``, ``handle_async_request``)."""
    if (sym.get("signature") or "").lstrip().startswith("async "):
        return True
    parts = (sym.get("qualname") or sym.get("name") or "").split(".")
    words = set(split_identifier(parts[-1]))
    if len(parts) > 1 and parts[-2][:1].isupper():  # the enclosing class
        words |= set(split_identifier(parts[-2]))
    return "async" in words


def _joined(identifier: str) -> str:
    return "".join(split_identifier(identifier.split(".")[-1]))


def _tail(qualname: str, count: int) -> list[str]:
    """The last ``count`` segments of a dotted name, each joined (case style dropped)."""
    return ["".join(split_identifier(part)) for part in qualname.split(".")[-count:]]


def _named(token: str, sym: dict[str, Any]) -> bool:
    """``sym`` is a definition the query token names: a plain token by the definition's name (in any
    case style), a dotted one (``Class.method``, ``pkg.mod.func``) by the end of its qualified name,
    segment by segment, so ``Client.send`` names ``httpx.Client.send`` and not ``AsyncClient.send``
    nor ``TestClient.send``."""
    parts = [p for p in token.split(".") if p]
    if len(parts) == 1:
        return sym["kind"] != "module" and _tail(sym["name"], 1) == _tail(token, 1)
    qualname = sym.get("qualname") or ""
    return len(qualname.split(".")) >= len(parts) and _tail(qualname, len(parts)) == _tail(token, len(parts))


def _qualified_targets(store: GraphReader, token: str, owner: bool = True) -> list[dict[str, Any]]:
    """The definitions a dotted token names, longest suffix first: ``httpx.Client.send`` falls back on
    ``Client.send`` when no qualified name ends with the whole path, but never on ``send`` alone.

    A member the code does not have (``Response.is_error`` in "Add Response.is_error", an attribute
    set in ``__init__``, a method a question wrongly remembers) names its owner instead: the classes
    ``Response`` names (``_owner_classes``). The class is where that member would live or is
    assigned, which answers the question better than the tie of every same-named word the ranked
    arms give; a member name with no such class pins nothing."""
    parts = [p for p in token.split(".") if p]
    candidates = store.find_symbols(parts[-1], limit=50)
    while len(parts) >= 2:
        found = [s for s in candidates if _named(".".join(parts), s)]
        if found:
            return found
        parts = parts[1:]
    return _owner_classes(store, token) if owner else []


def _owner_classes(store: GraphReader, token: str) -> list[dict[str, Any]]:
    """The classes (and other containers) the part of ``token`` before its last dot names, with their
    methods that assign the member (``self.member = ...``, ``this.member = ...``): an attribute is
    defined where it is assigned, usually the constructor."""
    parts = [p for p in token.split(".") if p]
    member, parts = parts[-1], parts[:-1]
    if not parts:
        return []
    if len(parts) == 1:
        named = [s for s in store.find_symbols(parts[0], limit=50) if _named(parts[0], s)]
    else:
        named = _qualified_targets(store, ".".join(parts), owner=False)
    owners = [s for s in named if s["kind"] in CONTAINER_KINDS]
    if not owners:
        return []
    assigns = re.compile(rf"\b(?:self|this)\.{re.escape(member)}\s*(?::[^=\n]+)?=(?!=)")
    methods = [m for m in store.members([s["id"] for s in owners]) if m["kind"] in ("function", "method")]
    texts = store.symbols([m["id"] for m in methods], with_text=True)
    setters = [m for m in methods if assigns.search((texts.get(m["id"]) or {}).get("text") or "")]
    return setters + owners


def _pin_exact(
    store: GraphReader,
    query: Query,
    fused: list[tuple[str, float, dict[str, int]]],
    symbols: dict[str, dict[str, Any]] | None = None,
    also: set[str] | None = None,
) -> list[tuple[str, float, dict[str, int]]]:
    """A query token that names a definition pins that definition above the fused list: exactly as
    written, or in another case style among the candidates (``SchedulePaymentRetry`` for
    ``schedule_payment_retry``); a dotted token (``Class.method``) pins only the definitions whose
    qualified name ends with it (see ``_named``); ``also`` adds other exact answers (config sections
    naming the token)."""
    pinned: list[str] = []
    for token in query.identifiers:
        if "." in token.strip("."):
            named = _qualified_targets(store, token)
            named += [s for s in (symbols or {}).values() if _named(token, s)] if named else []
        else:
            named = [s for s in store.find_symbols(token, limit=5) if s["name"] == token]
            # another case style only for a name of several words: ``Request`` is not ``request``
            other_style = len(split_identifier(token)) > 1
            named += [s for s in (symbols or {}).values() if (_named(token, s) if other_style else s["name"] == token)]
        if not query.about_tests and any(not is_test(s) for s in named):
            # a hook a test defines under the library's name (``def before_request():`` in a test) is
            # a use of the name, not the definition the question names: it competes unpinned
            named = [s for s in named if not is_test(s)]
        pinned.extend(s["id"] for s in named if s["id"] not in pinned)
    pinned.extend(doc for doc in _spelled_members(store, query) if doc not in pinned)
    pinned.extend(sorted(doc for doc in also or () if doc not in pinned))
    return _pinned_first(fused, pinned, "exact")


_CLASS_WORD = re.compile(r"\b[A-Z][A-Za-z0-9]*\b")
# A lower-case word is looked up as the class of the same name capitalised ("how does flask dispatch
# a request" names ``Flask``): people write a framework's or a model's name in lower case as often as
# not. The method's words must still follow it, adjacent, so a common word ("request", "client") names
# a class's method only when the question spells that method out.
_LOWER_WORD = re.compile(r"\b[a-z][a-z0-9]{2,}\b")
_QUESTION_WORDS = frozenset(
    "how does what when where which who why are was were the this that there then with from into for and"
    " not our its can get set".split()
)
CLASS_WORDS = 6  # capitalised words of a question looked up as class names, at most (and as many lower-case)
BASE_DEPTH = 3  # base classes walked for inherited members


def _spelled_members(store: GraphReader, query: Query) -> list[str]:
    """Methods a question names in prose: a capitalised word that is exactly a class's name (or a
    lower-case word that is one once capitalised, ``_LOWER_WORD``) followed,
    somewhere in the question, by the words of one of its methods' names, in order and adjacent once
    stop words are dropped. "how does Flask dispatch a request to a view?" names
    ``Flask.dispatch_request`` (the class's own or an inherited one, the most derived first), which
    the ranked arms tie with, or put below, ``View.dispatch_request``: the same words on another class.
    A method of one word ("Flask run") is too common a word to count, and a question that writes
    code names (``query.identifiers``) is taken at its word: "who depends on Cookies.extract_cookies,
    i.e. how Set-Cookie headers are loaded?" does not also name ``Cookies.set_cookie_header``."""
    if query.identifiers:
        return []
    terms = analyze(query.text)
    capitalised = list(dict.fromkeys(_CLASS_WORD.findall(query.text)))[:CLASS_WORDS]
    lower = [w.capitalize() for w in _LOWER_WORD.findall(query.text) if w not in _QUESTION_WORDS]
    words = list(dict.fromkeys(capitalised + lower[:CLASS_WORDS]))
    found: list[str] = []
    named: dict[str, list[str]] = {}
    for s in store.classes_named(words):
        named.setdefault(s["name"], []).append(s["id"])
    for word in words:
        after = terms
        if word not in capitalised:  # a lower-case class word names the method whose words follow it at once
            stemmed = analyze(word.lower())
            at = next((i for i, term in enumerate(terms) if stemmed and term == stemmed[0]), len(terms))
            after = terms[at + 1 :]
            if len(after) < 2:  # no method of two words or more can follow: no walks for it
                continue
        classes = named.get(word, [])
        if not classes:
            continue
        order, frontier = list(classes), list(classes)  # the classes, then their bases, nearest first
        for _ in range(BASE_DEPTH):
            frontier = [base for _, base in store.inherits(frontier, "out") if base not in order]
            order += frontier
        rank = {doc: i for i, doc in enumerate(order)}
        best: dict[str, tuple[int, str]] = {}  # method name -> (how far up the class chain, its id)
        for member in store.members(order):
            owner = member.get("parent_id") or ""
            parts = [stem for part in split_identifier(member["name"]) for stem in analyze(part)]
            spelled = _adjacent(parts, after) if after is terms else after[: len(parts)] == parts
            if len(parts) < 2 or owner not in rank or not spelled:
                continue
            if member["name"] not in best or rank[owner] < best[member["name"]][0]:
                best[member["name"]] = (rank[owner], member["id"])
        found += [doc for _, doc in sorted(best.values()) if doc not in found]
    return found


def _adjacent(parts: list[str], terms: list[str]) -> bool:
    """``parts`` occur in ``terms`` in order, one after the other."""
    return any(terms[i : i + len(parts)] == parts for i in range(len(terms) - len(parts) + 1))


def _pinned_first(
    fused: list[tuple[str, float, dict[str, int]]], pinned: list[str], arm: str, keep_order: bool = False
) -> list[tuple[str, float, dict[str, int]]]:
    """``pinned`` above the rest of ``fused`` (in fused order unless ``keep_order``), each marked with
    ``arm`` in its ranks."""
    if not pinned:
        return fused
    order = {doc: i for i, (doc, _, _) in enumerate(fused)}
    if not keep_order:
        pinned = sorted(pinned, key=lambda doc: order.get(doc, len(order)))
    ranks = {doc: r for doc, _, r in fused}
    top = (fused[0][1] if fused else 0.0) + 1.0
    head = [(doc, top - i * 1e-6, {**ranks.get(doc, {}), arm: i + 1}) for i, doc in enumerate(pinned)]
    chosen = set(pinned)
    return head + [item for item in fused if item[0] not in chosen]


def literal_matches(store: GraphReader, query: Query) -> dict[str, float]:
    """Definition id -> how much of a phrase the question quotes one of its string literals holds:
    the share of the phrase's words found in order in one literal (``_in_order``)
    (the best over the phrases), for the definitions at or above ``PHRASE_COVERAGE``. Candidates
    come from the literal field's own full-text index, so a message's common words ("no such
    command") do not drown in every definition that uses them."""
    best: dict[str, float] = {}
    for phrase in query.phrases:
        words = analyze(phrase)
        pool = [doc for doc, _ in store.fulltext(" ".join(dict.fromkeys(words)), LEXICAL_POOL, "Symbol", "literals")]
        for doc, text in store.lexical_docs(pool, "Symbol", "literals").items():
            for literal in text.splitlines():
                share = _in_order(words, literal.split())
                if share >= PHRASE_COVERAGE and share > best.get(doc, 0.0):
                    best[doc] = share
    return best


def _in_order(words: list[str], tokens: list[str]) -> float:
    """The share of ``words`` found in ``tokens`` in the same order (difflib's matching blocks, the
    standard library's longest-common-subsequence-like matcher), when one run holds at least two of
    them; else 0. A message's variable part ("Class with name 'AuthorSchema' was not found" against
    the f-string's "Class with name {classname!r} was not found") breaks the run, not the match."""
    blocks = SequenceMatcher(None, words, tokens, autojunk=False).get_matching_blocks()
    if not words or max((b.size for b in blocks), default=0) < 2:
        return 0.0
    return sum(b.size for b in blocks) / len(words)


def _pin_literals(
    store: GraphReader,
    query: Query,
    fused: list[tuple[str, float, dict[str, int]]],
    symbols: dict[str, dict[str, Any]],
    matches: dict[str, float] | None = None,
) -> list[tuple[str, float, dict[str, int]]]:
    """The library definitions holding the fullest match of a phrase the question quotes ("Error: No
    such command", "Did you mean") pinned first, in fused order. Tests and examples that assert on or
    print the same message are not pinned (unless the question is about tests), nor are weaker
    partial matches: pinned, a dozen tests holding "Missing data for required field." pushed the
    method that raises it out of the first ten (marshmallow's set); they keep their fused place, and
    the learned ranking weighs their match as one feature among the others."""
    matches = literal_matches(store, query) if matches is None else matches
    if not matches:
        return fused
    symbols.update(store.symbols([doc for doc in matches if doc not in symbols], with_text=False))
    side = lambda doc: is_test(symbols[doc]) or is_example(symbols[doc]) if doc in symbols else True  # noqa: E731
    library = {doc: share for doc, share in matches.items() if query.about_tests or not side(doc)}
    if not library:
        return fused
    best = max(library.values())
    order = {doc: i for i, (doc, _, _) in enumerate(fused)}
    pinned = sorted(
        (doc for doc, share in library.items() if share >= best), key=lambda d: (order.get(d, len(order)), d)
    )
    pinned = _users_first(store, query, pinned, symbols, order)
    return _pinned_first(fused, pinned, "literal", keep_order=True)


# A message kept in a class's table rather than where it is raised: ``default_message = "Must be one
# of: {choices}."`` (read as ``self.default_message``) or ``"required": "Missing data for required
# field."`` in an ``error_messages`` dict (raised as ``self.make_error("required")``). The name before
# the message, on the line that holds it.
_SLOT = re.compile(r"""^\s*(?:(?P<attr>[A-Za-z_]\w*)\s*(?::[^=]*)?=|["'](?P<key>[\w.-]+)["']\s*:)""")


def message_slot(text: str, phrase: str) -> tuple[str, str] | None:
    """Where a class keeps a message: ("attr", name) for a class attribute assigned it, ("key", key)
    for a mapping entry holding it, on the first line of ``text`` whose literals hold most of
    ``phrase``'s words in order; None when no such line names it."""
    words = analyze(phrase)
    for line in text.splitlines():
        if _in_order(words, analyze(line)) >= PHRASE_COVERAGE:
            slot = _SLOT.match(line)
            if slot:
                return ("attr", slot["attr"]) if slot["attr"] else ("key", slot["key"])
    return None


def _users_first(
    store: GraphReader, query: Query, pinned: list[str], symbols: dict[str, dict[str, Any]], order: dict[str, int]
) -> list[str]:
    """Each pinned class that keeps the quoted message in a table (``message_slot``) preceded by its
    own methods that read that attribute or name that key: the question asks where the message is
    raised or produced, and that is the method, not the table. Without such a method the class stays."""
    classes = [doc for doc in pinned if (symbols.get(doc) or {}).get("kind") == "class"]
    if not classes:
        return pinned
    texts = store.symbols(classes, with_text=True)
    out: list[str] = []
    for doc in pinned:
        slots = {
            slot for phrase in query.phrases if (slot := message_slot(texts.get(doc, {}).get("text") or "", phrase))
        }
        if doc in classes and slots:
            members = [m["id"] for m in store.members([doc]) if m.get("kind") in ("method", "function")]
            bodies = store.symbols(members, with_text=True)
            uses = [
                m
                for m in members
                if any(_reads(bodies.get(m, {}).get("text") or "", kind, name) for kind, name in slots)
            ]
            out += sorted((m for m in uses if m not in out), key=lambda m: (order.get(m, len(order)), m))
        if doc not in out:
            out.append(doc)
    return out


def _reads(text: str, kind: str, name: str) -> bool:
    """A method's text reads the attribute (``self.name``, ``cls.name``) or names the key (``"name"``)."""
    if kind == "attr":
        return re.search(rf"\b(?:self|cls|type\(self\))\.{re.escape(name)}\b", text) is not None
    return re.search(rf"""["']{re.escape(name)}["']""", text) is not None


def _impact_first(
    store: GraphReader,
    query: Query,
    fused: list[tuple[str, float, dict[str, int]]],
    symbols: dict[str, dict[str, Any]],
) -> list[tuple[str, float, dict[str, int]]]:
    """An impact question ("what calls X?", "what breaks if I change X?") answered from the graph: the
    callers of X (dispatch through base methods included, cg/queries/expand.py), direct callers
    before callers of callers, the most trusted edges first (ResolvedBy ranks), library code before
    tests; then X itself, then the tests (with the library callers when the question asks about
    tests); then the rest of the ranking. X is the definitions the question names (pinned exact),
    else the first hit that is not a test."""
    named = [doc for doc, _, r in fused if "exact" in r]
    targets = named or [doc for doc, _, _ in fused[:1] if doc in symbols and not is_test(symbols[doc])]
    if not targets:
        return fused
    order = {doc: i for i, (doc, _, _) in enumerate(fused)}
    steps = expand(store, targets, "in", depth=IMPACT_DEPTH, fanout=IMPACT_FANOUT)
    steps = [s for s in steps if s.label == "Symbol" and s.id not in targets]
    if not steps:
        return fused
    key = lambda s: (s.depth, edge_rank(s.resolved_by), order.get(s.id, len(order)), s.id)  # noqa: E731
    if query.about_tests:  # "which tests will fail if ...": the tests are the answer, in call order
        pinned = [s.id for s in sorted(steps, key=key)] + list(targets)
    else:
        library = sorted((s for s in steps if not is_test(s.node)), key=key)
        tests = sorted((s for s in steps if is_test(s.node)), key=key)
        pinned = [s.id for s in library] + list(targets) + [s.id for s in tests]
    ranked = _pinned_first(fused, pinned, "callers", keep_order=True)
    depth = {s.id: s.depth for s in steps}
    return [(doc, score, {**r, "callers": depth[doc]} if doc in depth else r) for doc, score, r in ranked]
