"""A question, analysed once, and the ranking settings, read once: what every ranked query takes.

``Query.parse`` does everything cg reads from a question's text (its lexical terms, the tokens
written as code, quoted strings and message-like phrases, its intent, and what the question says
about tests and sync/async), and
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
from typing import Any

import numpy as np

from cg.config import Settings
from cg.embed import Embedder
from cg.lexical import analyze, analyze_query, query_expansions
from cg.queries.ranker_model import MODEL as RANKER_MODEL

FUSIONS = ("learned", "score", "rrf")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_QUOTED = re.compile(r"\"([^\"]+)\"|`([^`]+)`|(?<!\w)'([^']+)'(?!\w)")
# a quoted string with a space: a message, not a name (the names inside it are the message's too)
_QUOTED_PHRASE = re.compile(r"\"[^\"]*\s[^\"]*\"|(?<!\w)'[^']*\s[^']*'(?!\w)")
# A question that says which side of a sync/async API it means ("with a sync Client", "the async
# transport", "a plain (non-async) generator"); "blocking" counts as sync.
_SYNC = re.compile(r"\bnon-async\b|\bsync(?:hronous(?:ly)?)?\b|\bblocking\b", re.I)
_ASYNC = re.compile(r"(?<!non-)\basync(?:hronous(?:ly)?)?\b|\bawait", re.I)

# What a question asks for (``Query.intent``), read from its wording, first match wins:
# - impact: who depends on a definition ("what calls X?", "who uses X", "what breaks if I change X");
#   search answers it from the graph (callers of X), not from text that resembles X;
# - exact: it quotes what a user sees (an error message) or is little more than a name;
# - flow: how something works or what happens after an event (a chain of calls);
# - location: where something is done (the default).
INTENTS = ("flow", "location", "impact", "exact")
_CHANGE = (
    r"(?:change[ds]?|changing|modif(?:y|ied|ying)|renam(?:e|ed|ing)|remov(?:e|ed|ing)|delet(?:e|ed|ing)"
    r"|touch(?:ed)?)"
)
_IMPACT = re.compile(
    # the verb has an object ("which tests use X"), not a clause's end ("which fields a schema uses?")
    r"\b(?:what|who|which\b[\w\s]{0,30}?)\s+(?:else\s+)?(?:calls?|uses?|invokes?|depends?\s+on|consumes?|relies\s+on)\b"
    r"(?=\s*[\w\"'`(<])"
    r"|\bcall(?:er|ers|ing)\s+(?:of|to)\b|\bcall\s+sites?\b|\busages?\s+of\b"
    r"|\bwhere\s+(?:is|are)\s+\S+\s+(?:used|called|invoked)\b"
    rf"|\b(?:break|breaks|broken|affected|affects?|impact(?:ed)?)\b.{{0,60}}\b{_CHANGE}\b"
    rf"|\b{_CHANGE}\b.{{0,80}}\b(?:break|breaks|affected|affects?|impact(?:ed|s)?|consumes?|depends?\s+on)\b"
    r"|\bchanges?\s+if\b"
    # a what-if: "if X returned None instead, what would be affected / who has to change / which tests fail"
    r"|^\W*(?:\w+\W+){0,3}?if\b.{0,160}\b(?:affected|break|breaks|broken|fail|failing|change|changes|differently"
    r"|ha(?:ve|s)\s+to|who\s+would|what\s+else|consumes?)\b",
    re.I,
)
_FLOW = re.compile(
    r"\bhow\s+(?:does|do|is|are|did|can)\b|\bwhat\s+happens\b|\bwalk\s+me\s+through\b|\bflow\b"
    r"|\bsteps?\b|\bsequence\b|\bend\s+up\b|\bwhat\s+(?:picks|handles|processes)\b",
    re.I,
)
# A phrase a user saw, quoted or not: "Error: No such command ...", "Did you mean ...?". An
# ellipsis stands for the part that varies; the words around it are matched inside one literal.
_ELLIPSIS = re.compile(r"\.\.\.+|\u2026")
_LABEL = re.compile(r"^[A-Za-z][\w.]*:\s+")
_MESSAGE = re.compile(
    r"(?:\b[A-Z][A-Za-z]*(?:Error|Exception|Warning)?|\bUsage|\bError):\s+[^\"?]+\??"
    r"|\b(?:Did you mean|Try|No such|Cannot|Could not|Unable to|Invalid|Missing|Unknown)\b"
    r"[^\"?.!]*(?:\.\.\.|\u2026)?[^\"?]*\??"
)


# A token written as code: snake_case, dotted, camelCase or CamelCase with an inner capital
# (``StripeGateway``), or led by an acronym (``URLPattern``, ``HTTPTransport``; two or more lower-case
# letters after the capitals, so the plurals ``URLs`` and ``IDs`` stay words).
_CODE_SHAPED = re.compile(r"[_.]|[a-z][A-Z]|[A-Z]{2,}[a-z]{2,}")
# A capitalised name in a Markdown code span (`Client`): a class the writer marks as code. A lower-case
# word in one (`body`, `lifespan`) is as often a parameter or a key as a definition: left to the arms.
_CODE_SPAN = re.compile(r"`([A-Z][A-Za-z0-9_.]*)(?:\(\))?`")


def exact_identifiers(text: str) -> list[str]:
    """Tokens of the text that are written as code (``_CODE_SHAPED``), capitalised names in a Markdown
    code span (``_CODE_SPAN``: ```Client``` reads as a word, but the writer says it is code), or the
    whole text being one word. Plain words ("payment retry") are left to the ranked arms."""
    tokens = _IDENTIFIER.findall(_QUOTED_PHRASE.sub(" ", text))
    if len(tokens) == 1:
        return tokens
    spans = {m.group(1).strip(".") for m in _CODE_SPAN.finditer(text)}
    return [t for t in dict.fromkeys(tokens) if _CODE_SHAPED.search(t) or t in spans]


def message_phrases(text: str, quoted: tuple[str, ...]) -> tuple[str, ...]:
    """The parts of a question that read as a message a program prints: each quoted string that is
    not a bare name, else the unquoted ``Error: ...`` / ``Did you mean ...?`` text; split at an
    ellipsis, each piece with at least two words or one word that is not an identifier."""
    candidates = [q for q in quoted if not _IDENTIFIER.fullmatch(q.strip())]
    if not candidates:
        candidates = [m.group(0) for m in _MESSAGE.finditer(text)]
    if not candidates:  # an unquoted "'x' is not one of ...": the words just before each ellipsis
        candidates = [" ".join(piece.split()[-6:]) for piece in _ELLIPSIS.split(text)[:-1]]
    pieces: list[str] = []
    for candidate in candidates:
        for piece in _ELLIPSIS.split(candidate):
            piece = piece.strip(" '\"`.:?!,")
            bare = _LABEL.sub("", piece)  # "Error: No such command": the label is printed elsewhere
            piece = bare if len(analyze(bare)) >= 2 else piece
            if len(analyze(piece)) >= 2 and piece not in pieces:
                pieces.append(piece)
    return tuple(pieces)


# A question about tests ("which tests cover X", "the test for refunds", "is this tested"): test code
# is then not ranked down nor kept out of explain's flow. The library's own test tooling is not that:
# "how does the test client send a request" asks about FlaskClient, "the testing runner" about
# CliRunner, whose words only start with "test"; nor is a word that merely holds it ("latest").
_TEST_WORD = re.compile(r"\btest(?:s|ed|ing)?\b|\bpytest\b|\bunit\s?tests?\b", re.I)
_TEST_TOOLING = re.compile(
    r"\btest(?:ing)?[\s_-]+(?:client|runner|request|app|application|server|context|utilit(?:y|ies)|helpers?"
    r"|mode|config|response|environ|cli)\b",
    re.I,
)


def about_tests(text: str) -> bool:
    """Whether a question asks about test code (see ``_TEST_WORD``)."""
    return bool(_TEST_WORD.search(_TEST_TOOLING.sub(" ", text)))


def intent_of(text: str, identifiers: tuple[str, ...], phrases: tuple[str, ...]) -> str:
    """What the question asks for (see INTENTS)."""
    if _IMPACT.search(text):
        return "impact"
    if phrases or (identifiers and len(text.split()) <= 3):
        return "exact"
    if _FLOW.search(text):
        return "flow"
    return "exact" if identifiers else "location"


@dataclass(frozen=True)
class Query:
    """A question as the queries read it; ``vector`` is None until ``with_vector`` embeds it."""

    text: str
    terms: tuple[str, ...]  # the lexical arm's analysed terms (cg.lexical.analyze_query), repeats kept
    expansions: tuple[str, ...]  # short forms code writes for its words (cg.lexical.ABBREVIATIONS): lexical arm only
    identifiers: tuple[str, ...]  # tokens written as code, pinned when they name a definition
    quoted: tuple[str, ...]  # "exact strings" the question quotes
    phrases: tuple[str, ...]  # message-like text to find among string literals (quoted, or "Error: ...")
    intent: str  # one of INTENTS: flow | location | impact | exact
    about_tests: bool  # the question mentions tests: test code is not ranked down
    async_side: bool | None  # True: it asks about the async side of an API, False: the sync side, None: neither
    vector: np.ndarray | None = field(default=None, repr=False, compare=False)

    @classmethod
    def parse(cls, text: str) -> Query:
        wants_sync, wants_async = bool(_SYNC.search(text)), bool(_ASYNC.search(text))
        identifiers = tuple(exact_identifiers(text))
        quoted = tuple(next(g for g in m.groups() if g is not None) for m in _QUOTED.finditer(text))
        phrases = message_phrases(text, quoted)
        return cls(
            text=text,
            terms=tuple(analyze_query(text).split()),
            expansions=query_expansions(text),
            identifiers=identifiers,
            quoted=quoted,
            phrases=phrases,
            intent=intent_of(text, identifiers, phrases),
            about_tests=about_tests(text),
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
    """How hits are fused and weighed: the fusion (learned, score or rrf), RRF's k, each arm's weight
    (lexical, vector, doc, graph), the priors' factors (tests, examples, modules, containers,
    sync_async), and with ``learned`` the model that orders the score-fused pool in their place
    (cg/queries/ranker_model.py, written by benchmarks/fit_ranker.py)."""

    fusion: str
    rrf_k: int
    weights: Mapping[str, float]
    priors: Mapping[str, float]
    model: Mapping[str, Any] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.fusion not in FUSIONS:
            raise ValueError(f"unknown fusion {self.fusion!r} (use {' or '.join(FUSIONS)})")

    @classmethod
    def from_settings(cls, settings: Settings) -> Ranking:
        return cls(
            fusion=settings.fusion,
            model=RANKER_MODEL if settings.fusion == "learned" else None,
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
                "examples": settings.prior_examples,
            },
        )

    @classmethod
    def default(cls) -> Ranking:
        """The ranking of a repository without settings of its own."""
        return _default_ranking()

    def with_fusion(self, fusion: str) -> Ranking:
        """The same weights and priors fused by ``fusion`` (learned, score or rrf); ``learned`` takes the
        shipped model unless this ranking has one."""
        model = (self.model or RANKER_MODEL) if fusion == "learned" else None
        return replace(self, fusion=fusion, model=model)

    def with_model(self, model: Mapping[str, Any]) -> Ranking:
        """Learned fusion with ``model`` (a fold's weights, in benchmarks/fit_ranker.py)."""
        return replace(self, fusion="learned", model=model)

    def without_graph(self) -> Ranking:
        """The text arms alone: the graph arm's weight set to 0."""
        return replace(self, weights={**self.weights, "graph": 0.0})


@cache
def _default_ranking() -> Ranking:
    return Ranking.from_settings(Settings(repo=Path(".")))


def unembedded(store: Any) -> int:
    """How many files and commits the index holds without their vectors (``cg index --embed later``,
    or a run stopped while embedding); 0 when the vector arm sees everything. Read from the store's
    metadata, which the run that stored them wrote."""
    return sum(int(store.get_meta(key) or 0) for key in ("unembedded_files", "unembedded_commits"))


def partial_vectors_note(count: int) -> str:
    """The line an answer carries while part of the index has no vectors yet."""
    return (
        f"note: {count} files and commits have no vectors yet (`--embed later`, or a run stopped while"
        " embedding); the answer comes from the full-text and graph arms there. `cg index` computes them."
    )
