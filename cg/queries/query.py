"""A question, analysed once, and the ranking settings, read once: what every ranked query takes.

``Query.parse`` does everything cg reads from a question's text (its lexical terms, the tokens
written as code, quoted strings, and what the question says about tests and sync/async), and
``with_vector`` embeds it once; search, explain, evaluate and the doc sources all take the same
``Query``, so none of them re-analyses or re-embeds the question. ``Ranking`` holds the fusion
settings, built from ``Settings`` (where their defaults are written) by ``Ranking.from_settings``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

import numpy as np

from cg.config import Settings
from cg.embed import Embedder
from cg.lexical import analyze_query

FUSIONS = ("score", "rrf")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_QUOTED = re.compile(r"\"([^\"]+)\"|`([^`]+)`|(?<!\w)'([^']+)'(?!\w)")
# A question that says which side of a sync/async API it means ("with a sync Client", "the async
# transport", "a plain (non-async) generator"); "blocking" counts as sync.
_SYNC = re.compile(r"\bnon-async\b|\bsync(?:hronous(?:ly)?)?\b|\bblocking\b", re.I)
_ASYNC = re.compile(r"(?<!non-)\basync(?:hronous(?:ly)?)?\b|\bawait", re.I)


def exact_identifiers(text: str) -> list[str]:
    """Tokens of the text that are written as code: snake_case, camelCase, dotted, or the whole
    text being one word. Plain words ("payment retry") are left to the ranked arms."""
    tokens = _IDENTIFIER.findall(text)
    if len(tokens) == 1:
        return tokens
    return [t for t in tokens if "_" in t or "." in t or re.search(r"[a-z][A-Z]", t)]


@dataclass(frozen=True)
class Query:
    """A question as the queries read it; ``vector`` is None until ``with_vector`` embeds it."""

    text: str
    terms: tuple[str, ...]  # the lexical arm's analysed terms (cg.lexical.analyze_query), repeats kept
    identifiers: tuple[str, ...]  # tokens written as code, pinned when they name a definition
    quoted: tuple[str, ...]  # "exact strings" the question quotes
    about_tests: bool  # the question mentions tests: test code is not ranked down
    async_side: bool | None  # True: it asks about the async side of an API, False: the sync side, None: neither
    vector: np.ndarray | None = field(default=None, repr=False, compare=False)

    @classmethod
    def parse(cls, text: str) -> Query:
        wants_sync, wants_async = bool(_SYNC.search(text)), bool(_ASYNC.search(text))
        return cls(
            text=text,
            terms=tuple(analyze_query(text).split()),
            identifiers=tuple(exact_identifiers(text)),
            quoted=tuple(next(g for g in m.groups() if g is not None) for m in _QUOTED.finditer(text)),
            about_tests="test" in text.lower(),
            async_side=None if wants_sync == wants_async else wants_async,
        )

    @classmethod
    def of(cls, query: Query | str) -> Query:
        """``query`` itself, or the text parsed."""
        return query if isinstance(query, Query) else cls.parse(query)

    @property
    def embedding(self) -> np.ndarray:
        """The vector ``with_vector`` computed (a ValueError before it)."""
        if self.vector is None:
            raise ValueError(f"the query {self.text!r} is not embedded yet: call with_vector(embedder) first")
        return self.vector

    def with_vector(self, embedder: Embedder) -> Query:
        """This query with its embedding: computed on the first call, kept by every later one."""
        if self.vector is not None:
            return self
        return replace(self, vector=embedder.embed([self.text])[0])


@dataclass(frozen=True)
class Ranking:
    """How hits are fused and weighed: the fusion (score or rrf), RRF's k, each arm's weight
    (lexical, vector, doc, graph) and the priors' factors (tests, modules, containers, sync_async)."""

    fusion: str
    rrf_k: int
    weights: Mapping[str, float]
    priors: Mapping[str, float]

    def __post_init__(self) -> None:
        if self.fusion not in FUSIONS:
            raise ValueError(f"unknown fusion {self.fusion!r} (use {' or '.join(FUSIONS)})")

    @classmethod
    def from_settings(cls, settings: Settings) -> Ranking:
        return cls(
            fusion=settings.fusion,
            rrf_k=settings.rrf_k,
            weights={
                "lexical": settings.weight_lexical,
                "vector": settings.weight_vector,
                "doc": settings.weight_doc,
                "graph": settings.weight_graph,
            },
            priors={
                "tests": settings.prior_tests,
                "modules": settings.prior_modules,
                "containers": settings.prior_containers,
                "sync_async": settings.prior_sync_async,
            },
        )

    @classmethod
    def default(cls) -> Ranking:
        """The ranking of a repository without settings of its own."""
        return _default_ranking()

    def with_fusion(self, fusion: str) -> Ranking:
        """The same weights and priors fused by ``fusion`` (score or rrf)."""
        return replace(self, fusion=fusion)

    def without_graph(self) -> Ranking:
        """The text arms alone: the graph arm's weight set to 0."""
        return replace(self, weights={**self.weights, "graph": 0.0})


@cache
def _default_ranking() -> Ranking:
    return Ranking.from_settings(Settings(repo=Path(".")))
