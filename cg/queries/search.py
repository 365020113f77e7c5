"""Hybrid search: the lexical arm (full-text over analyzed identifiers) and the dense arm (cosine over
definition embeddings), fused with Reciprocal Rank Fusion.

RRF adds ``weight / (k + rank)`` per arm. It needs no score calibration between BM25 and cosine,
which live on unrelated scales, and a definition found by both arms outranks one found by either
alone. ``k = 60`` is the value of the original RRF paper; the weights are in config.

The backends only generate candidates; cg ranks them, so both backends give the same answer. Kùzu's
and Lucene's BM25 differ in their constants and length norms, and Neo4j's vector index is
approximate (HNSW) where Kùzu's scan is exact: left alone, the same index gives different seeds on
the two stores. So the lexical arm re-scores its pool with one BM25 (k1 = 1.2, b = 0.75) whose
document frequencies come from the pool itself, which is exact because the pool is every document
matching any query term (the backend's OR query) unless it hits ``LEXICAL_POOL``; N and the average
length come from the index's metadata. The dense arm re-scores its pool with the exact cosine of
the stored vectors.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from cg.graph.embed import Embedder
from cg.graph.store import GraphStore
from cg.lexical import analyze_text

CANDIDATES = 50  # per arm, into fusion
LEXICAL_POOL = 300  # full-text candidates re-scored by cg's BM25
BM25_K1, BM25_B = 1.2, 0.75
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


def exact_identifiers(query: str) -> list[str]:
    """Tokens of the query that are written as code: snake_case, camelCase, dotted, or the whole
    query being one word. Plain words ("payment retry") are left to the ranked arms."""
    tokens = _IDENTIFIER.findall(query)
    if len(tokens) == 1:
        return tokens
    return [t for t in tokens if "_" in t or "." in t or re.search(r"[a-z][A-Z]", t)]


@dataclass
class Hit:
    id: str
    score: float
    symbol: dict[str, Any]
    ranks: dict[str, int] = field(default_factory=dict)  # arm -> 1-based rank

    def as_dict(self, with_text: bool = False) -> dict[str, Any]:
        keys = ("qualname", "kind", "path", "start_line", "end_line", "signature", "docstring")
        data = {
            "id": self.id,
            **{k: self.symbol.get(k) for k in keys},
            "score": round(self.score, 6),
            "ranks": self.ranks,
        }
        if with_text:
            data["text"] = self.symbol.get("text")
        return data


def rrf(arms: dict[str, list[str]], weights: dict[str, float], k: int) -> list[tuple[str, float, dict[str, int]]]:
    scores: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    for arm, ids in arms.items():
        for rank, doc in enumerate(ids, start=1):
            scores[doc] = scores.get(doc, 0.0) + weights.get(arm, 1.0) / (k + rank)
            ranks.setdefault(doc, {})[arm] = rank
    ordered = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    return [(doc, score, ranks[doc]) for doc, score in ordered]


def lexical_ranking(store: GraphStore, query: str) -> list[str]:
    """Full-text candidates ranked by cg's BM25 (see the module docstring)."""
    terms = Counter(analyze_text(query).split())
    if not terms:
        return []
    pool = [doc for doc, _ in store.fulltext(" ".join(terms), LEXICAL_POOL)]
    docs = {doc: Counter(text.split()) for doc, text in store.lexical_docs(pool).items()}
    if not docs:
        return []
    total = int(store.get_meta("lexical_docs") or len(docs))
    avgdl = float(store.get_meta("lexical_avgdl") or 0.0) or sum(sum(c.values()) for c in docs.values()) / len(docs)
    df = {t: sum(1 for c in docs.values() if t in c) for t in terms}
    scores: dict[str, float] = {}
    for doc, counts in docs.items():
        length = sum(counts.values())
        score = 0.0
        for term, q_count in terms.items():
            tf = counts.get(term, 0)
            if not tf:
                continue
            idf = math.log(1 + (total - df[term] + 0.5) / (df[term] + 0.5))
            score += q_count * idf * tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * length / avgdl))
        scores[doc] = score
    return [doc for doc, _ in sorted(scores.items(), key=lambda kv: (-round(kv[1], 9), kv[0]))]


def vector_ranking(store: GraphStore, embedding) -> list[str]:
    """Vector candidates ranked by the exact cosine of their stored embeddings."""
    pool = [doc for doc, _ in store.vector(embedding, CANDIDATES)]
    vectors = store.embeddings(pool)
    query = embedding.astype("float32")
    scored = {doc: float(vec @ query) for doc, vec in vectors.items()}  # unit vectors: dot = cosine
    return [doc for doc, _ in sorted(scored.items(), key=lambda kv: (-round(kv[1], 6), kv[0]))]


def search(
    store: GraphStore,
    embedder: Embedder,
    query: str,
    limit: int = 10,
    *,
    rrf_k: int = 60,
    weights: dict[str, float] | None = None,
    kinds: tuple[str, ...] | None = None,
) -> list[Hit]:
    weights = weights or {"lexical": 1.0, "vector": 1.0}
    lexical = lexical_ranking(store, query)[:CANDIDATES]
    vector = vector_ranking(store, embedder.embed([query])[0])[:CANDIDATES]
    fused = rrf({"lexical": lexical, "vector": vector}, weights, rrf_k)
    fused = _pin_exact(store, query, fused)
    symbols = store.symbols([doc for doc, _, _ in fused[: max(limit * 3, CANDIDATES)]])
    hits: list[Hit] = []
    for doc, score, ranks in fused:
        sym = symbols.get(doc)
        if sym is None or (kinds and sym["kind"] not in kinds):
            continue
        hits.append(Hit(doc, score, sym, ranks))
        if len(hits) >= limit:
            break
    return hits


def _pin_exact(
    store: GraphStore, query: str, fused: list[tuple[str, float, dict[str, int]]]
) -> list[tuple[str, float, dict[str, int]]]:
    """A query token that names a definition exactly pins that definition above the fused list."""
    pinned: list[str] = []
    for token in exact_identifiers(query):
        for sym in store.find_symbols(token, limit=5):
            if sym["id"] not in pinned and token.split(".")[-1] == sym["name"]:
                pinned.append(sym["id"])
    if not pinned:
        return fused
    order = {doc: i for i, (doc, _, _) in enumerate(fused)}
    pinned.sort(key=lambda doc: order.get(doc, len(order)))
    top = (fused[0][1] if fused else 0.0) + 1.0
    head = [
        (doc, top - i * 1e-6, {**next((r for d, _, r in fused if d == doc), {}), "exact": 1})
        for i, doc in enumerate(pinned)
    ]
    return head + [item for item in fused if item[0] not in set(pinned)]
