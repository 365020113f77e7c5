"""The "why" beside the "how": README and design-note sections, and commit messages, that bear on a
question or on the definitions an answer shows.

Two ways in. By the question: doc sections and commit messages ranked like definitions are (cg's
BM25 over their analyzed text, exact cosine over their embeddings, fused by RRF). By the answer's
definitions: the newest commits whose diffs touched them (``TOUCHES``) and the sections that name
them (``MENTIONS``). A section or commit found by the question alone must clear a relevance bar
(found by both arms, or a cosine of at least ``MIN_COSINE``): an answer with no sources is better
than one padded with unrelated ones.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

from cg.embed import Embedder
from cg.graph.store import GraphReader
from cg.queries.lookup import citation
from cg.queries.query import Query
from cg.queries.search import CANDIDATES, bm25, rrf

MIN_COSINE = 0.45
SWEEPING = 20  # a commit that touched more files than this is not shown for the definitions it touched
MAX_SOURCES = 5
_LABELS = {"doc": "Doc", "commit": "Commit"}


@dataclass
class Source:
    kind: str  # doc | commit
    id: str
    title: str  # heading chain, or the commit's subject
    citation: str  # [README.md:10-24] or [commit 1a2b3c4d5e 2026-11-20]
    text: str  # the section, or the whole commit message
    score: float
    via: str  # "question", or how it is attached to a definition: "names <qualname>", "touched <qualname>"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _citation(kind: str, node: dict[str, Any]) -> str:
    if kind == "doc":
        return citation(node)
    day = time.strftime("%Y-%m-%d", time.gmtime(int(node.get("committed_at") or 0)))
    return f"[commit {node['short']} {day}]"


def _source(kind: str, node: dict[str, Any], score: float, via: str, how: str = "") -> Source:
    title = node.get("heading") or node.get("title") if kind == "doc" else node.get("subject")
    text = node.get("text") if kind == "doc" else node.get("message")
    via = f"{how} {via}" if how else via
    return Source(kind, node["id"], title or "", _citation(kind, node), text or "", round(score, 6), via)


def by_question(store: GraphReader, embedder: Embedder, query: Query | str, limit: int = 3) -> list[Source]:
    """Doc sections and commits ranked for the question (see the module docstring), ``limit`` of each."""
    query = Query.of(query).with_vector(embedder)
    query_vector = query.embedding
    out: list[Source] = []
    for kind, label in _LABELS.items():
        lexical = bm25(store, query.terms, (label,), label.lower())
        lex_ids = [doc for (_, doc), _ in sorted(lexical.items(), key=lambda kv: (-kv[1], kv[0][1]))][:CANDIDATES]
        pool = [doc for doc, _ in store.vector(query_vector, CANDIDATES, label)]
        cosine = {doc: float(vec @ query_vector) for doc, vec in store.embeddings(pool, label).items()}
        vec_ids = [doc for doc, _ in sorted(cosine.items(), key=lambda kv: (-kv[1], kv[0]))]
        fused = rrf({"lexical": lex_ids[:10], "vector": vec_ids[:10]}, {}, 60)
        kept = [(doc, score) for doc, score, ranks in fused if len(ranks) == 2 or cosine.get(doc, 0.0) >= MIN_COSINE][
            :limit
        ]
        nodes = store.nodes(label, [doc for doc, _ in kept])
        out += [_source(kind, nodes[doc], score, "question") for doc, score in kept if doc in nodes]
    return out


def by_definitions(store: GraphReader, symbols: dict[str, str], limit: int = 3) -> list[Source]:
    """The sections that name the answer's definitions (``symbols``: id -> qualname, in answer
    order) and the newest commits that touched them; each source once, attached to the first
    definition it names or touched."""
    named: dict[str, str] = {}
    mentions = store.docs_mentioning(list(symbols))
    for sid in symbols:
        for did in mentions.get(sid, []):
            named.setdefault(did, sid)
    first = list(named.items())[:limit]
    docs = store.nodes("Doc", [did for did, _ in first])
    found = [_source("doc", docs[did], 0.0, symbols[sid], "names") for did, sid in first if did in docs]
    touching = store.commits_touching(list(symbols), limit=limit * 3)
    seen: dict[str, tuple[int, str]] = {}
    for sid in symbols:
        for commit in touching.get(sid, []):
            seen.setdefault(commit["id"], (commit["committed_at"], sid))
    newest = sorted(seen.items(), key=lambda kv: (-kv[1][0], kv[0]))
    nodes = store.nodes("Commit", [cid for cid, _ in newest])
    # a sweeping commit (an import, a reformat) touched everything and explains nothing in particular
    focused = [(cid, sid) for cid, (_, sid) in newest if cid in nodes and (nodes[cid].get("files") or 0) <= SWEEPING]
    return found + [_source("commit", nodes[cid], 0.0, symbols[sid], "touched") for cid, sid in focused[:limit]]


def related_sources(
    store: GraphReader, embedder: Embedder, query: Query | str, symbols: dict[str, str], limit: int = 3
) -> list[Source]:
    """The sources for an answer: those the question finds, then those its definitions name or touched."""
    found = by_question(store, embedder, query, limit)
    ids = {s.id for s in found}
    found += [s for s in by_definitions(store, symbols, limit) if s.id not in ids]
    return found[:MAX_SOURCES]


@dataclass(frozen=True)
class DocHits:
    """The answer to ``cg search --docs``: doc sections and commits for the question."""

    sources: list[Source]

    def as_dict(self) -> list[dict[str, Any]]:
        return [s.as_dict() for s in self.sources]


def render_doc_hits(result: DocHits) -> str:
    return "\n".join(render_sources(result.sources, max_lines=3)[2:]) if result.sources else "no matches"


def render_sources(sources: list[Source], max_lines: int = 4) -> list[str]:
    """Markdown lines for an answer: each source with its citation and the start of its text."""
    if not sources:
        return []
    lines = ["", "## Docs and history"]
    for s in sources:
        via = "" if s.via == "question" else f" ({s.via})"
        lines.append(f"- {s.kind} {s.citation} {s.title}{via}")
        body = [line for line in s.text.splitlines() if line.strip()]
        if body and (body[0].lstrip("#").strip() == s.title.split(" > ")[-1] or body[0] == s.title):
            body = body[1:]  # the heading or subject is on the line above already
        body = body[:max_lines]
        lines += [f"  > {line}" for line in body]
    return lines
