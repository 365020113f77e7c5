"""``cg explain``: how does X work, as a walkthrough of the call flow, each step cited ``[path:start-end]``.

Assembly. Hybrid search gives the seeds: the hits that name what was asked (an exact identifier, or a
third of the question's terms), else the best hits. Whether to answer at all is decided first, by a
calibrated model over how much of the question the hits hold (``answerability``): a question about
something the code does not contain gets a plain "Nothing in the index matches" instead of the
nearest vectors. From the seeds the call graph is
walked both ways over CALLS, precise edges first (see expand.py): callers one hop further than callees,
because the flow has to be traced up to where it starts. Methods the flow calls that subclasses
override join the flow as dispatch steps, since a call through the base runs one of them. In-repo
decorators of the flow's definitions (DECORATES edges) join it too, right after what they wrap ("Router.route
wraps stripe_webhook"): the wrapper runs around every call of the definition, and the decorator's own
call belongs to the module or class that defines it, which is rarely in the flow.

Hub down-weighting. Each step's weight is its parent's times a decay per hop (and 0.7 when the edge is a
bare-name match rather than a jedi or import resolution), divided, for callees, by
``1 + log2(1 + callers beyond HUB_FREE)``: a helper called from everywhere (a logger, an error
constructor, a config getter) says little about this flow and would crowd out the steps that do. The
flow keeps the ``max_nodes`` heaviest steps plus the chain that connects each of them to a seed.

Entry points and order. A step nothing else in the flow calls is where the flow starts. The entry
that leads to the question's best seed comes first (the answer opens on the mechanism asked about,
not on a same-named method of another class that a lower seed brought in), and among entries that
lead to the same seed: route or CLI decorator first, then ``main``, then public API (no code outside
the tests calls it), then a step whose callers lie beyond the depth limit; test functions start a flow
only when nothing else does (otherwise they are listed as the tests that exercise it). The order is a
depth-first walk from the entry points along CALLS in call-site order, so the answer reads entry -> ...
-> leaves.

Budget. The token budget trims bodies before it drops definitions: every step first costs only its
signature and docstring, then full bodies are added in order of weight while they fit; only if even
the signatures do not fit are the lightest steps dropped, and the answer lists what it trimmed and
what it left out with their citations.
"""

from __future__ import annotations

import ast
import math
import re
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cg.embed import Embedder, approx_tokens
from cg.graph.store import CallRow, GraphReader
from cg.lexical import QUESTION_WORDS, split_identifier, stem
from cg.queries.expand import Step, expand, related_methods
from cg.queries.lookup import citation, is_example, is_test, is_test_function, short_id, source_line
from cg.queries.query import Query, Ranking, partial_vectors_note, unembedded
from cg.queries.refusal_model import MODEL as REFUSAL_MODEL
from cg.queries.search import LEXICAL_POOL, Hit, search
from cg.queries.sources import Source, related_sources, render_sources
from cg.queries.unwrap import for_answers

__all__ = ["citation", "explain", "render_markdown", "render_mermaid", "Explanation"]

CHARS_PER_TOKEN = 4  # a conservative average for code under BPE/WordPiece tokenizers
DECAY = 0.6  # weight kept per hop down from a seed (callees)
DECAY_UP = 0.8  # per hop up (callers): the way up leads to where the flow starts, which the answer needs
HUB_FREE = 3  # callers a definition may have before it counts as a hub
EDGE_TRUST = {"jedi": 1.0, "scip": 1.0, "import": 1.0, "name": 0.7}  # a bare-name match may be the wrong definition
MIN_WEIGHT = 0.02
TRIVIAL_LINES = 4  # a callee this short (def line included) that calls nothing in the repo is an accessor
TRIVIAL_PENALTY = 0.5
MIN_COVERAGE = 1 / 3  # share of the question's terms a seed must contain to count as relevant
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")  # a dotted name is one token
_QUOTED_SPAN = re.compile(r"\"[^\"]*\"|`[^`]*`|(?<!\w)'[^']*'(?!\w)")  # a quoted string, quotes and all
_ENDINGS = ("s", "es", "ed", "d", "ing")  # plain forms tried for a word the tokenizer splits (unknown_words)
_PRIMARY_KINDS = ("function", "method", "class")
_ROUTE = re.compile(
    r"(^|\.)(route|get|post|put|patch|delete|head|options|websocket|api_route|api_view|endpoint)\b", re.I
)
_CLI = re.compile(r"(^|\.)(command|group|callback)\b|^(click|typer)\.", re.I)
_ENTRY_RANK = {"route": 0, "cli": 0, "main": 1, "public": 2, "uncalled": 3, "partial": 4, "test": 5}
_ENTRY_TEXT = {
    "route": "HTTP route",
    "cli": "command-line entry",
    "main": "program entry (main)",
    "public": "public API: no code outside the tests calls it",
    "uncalled": "no code outside the tests calls it",
    "partial": "the flow continues above it (callers beyond --depth)",
    "test": "test function (no other entry point found)",
}


@dataclass
class FlowNode:
    id: str
    node: dict[str, Any]  # summary fields and text
    role: str  # seed | caller | callee | override | decorator
    weight: float
    entry: str = ""  # kind of entry point (route, cli, main, public, ...) or ""
    decorators: list[str] = field(default_factory=list)
    folded: list[dict[str, Any]] = field(default_factory=list)  # adapters and accessors folded into this step
    code: str | None = None
    code_state: str = "omitted"  # full | trimmed | outline (a class: header and member signatures) | omitted

    def as_dict(self) -> dict[str, Any]:
        keys = ("qualname", "kind", "path", "start_line", "end_line", "signature", "docstring")
        return {
            "id": self.id,
            **{k: self.node.get(k) for k in keys},
            "citation": citation(self.node),
            "role": self.role,
            "weight": round(self.weight, 4),
            "entry": self.entry or None,
            "decorators": self.decorators,
            "folded": self.folded,
            "code_state": self.code_state,
            "code": self.code,
        }


@dataclass(frozen=True)
class FlowEdge:
    src: str
    dst: str
    line: int
    resolved_by: str
    # CALLS | DISPATCH (a base method to an override that a call through it may run) | DECORATES (a decorator
    # to the definition it wraps)
    type: str = "CALLS"


@dataclass
class Explanation:
    query: str
    found: bool
    seeds: list[Hit] = field(default_factory=list)
    nodes: dict[str, FlowNode] = field(default_factory=dict)
    edges: list[FlowEdge] = field(default_factory=list)
    order: list[str] = field(default_factory=list)
    tests: list[dict[str, Any]] = field(default_factory=list)  # test functions that call into the flow
    nearest: list[Hit] = field(default_factory=list)  # when nothing relevant was found
    answerability: dict[str, float] = field(default_factory=dict)  # features and probability (see answerability())
    omitted: list[dict[str, Any]] = field(default_factory=list)  # definitions dropped by the budget
    token_budget: int = 0
    tokens_used: int = 0
    sources: list[Source] = field(default_factory=list)  # doc sections and commits (cg/queries/sources.py)
    unembedded: int = 0  # files and commits without vectors yet: the vector arm saw part of the index
    absent: list[str] = field(default_factory=list)  # names the question writes that no definition holds

    @property
    def entries(self) -> list[str]:
        return [i for i in self.order if self.nodes[i].entry]

    def as_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "found": self.found,
            "seeds": [h.id for h in self.seeds],
            "entries": self.entries,
            "order": self.order,
            "nodes": [self.nodes[i].as_dict() for i in self.order],
            "edges": [
                {"src": e.src, "dst": e.dst, "line": e.line, "resolved_by": e.resolved_by, "type": e.type}
                for e in self.edges
            ],
            "tests": self.tests,
            "nearest": [h.as_dict() for h in self.nearest],
            "answerability": self.answerability,
            "trimmed": [i for i in self.order if self.nodes[i].code_state == "trimmed"],
            "omitted": self.omitted,
            "token_budget": self.token_budget,
            "tokens_used": self.tokens_used,
            "sources": [s.as_dict() for s in self.sources],
            "unembedded": self.unembedded,
            "absent": self.absent,
        }


def _pick_seeds(hits: list[Hit], count: int, about_tests: bool = False) -> list[Hit]:
    """The first ``count`` hits, functions, methods and classes before the rest. A test seeds the
    flow only when the question is about tests or no hit is library code: "how does flask handle an
    exception raised in a view" is answered by the handlers, and the tests that reach them are listed
    apart (a test as a step of the flow, or the flow starting at one, is noise the reader skips)."""

    def rank(h: Hit) -> int:
        primary = h.symbol["kind"] in _PRIMARY_KINDS
        return (0 if primary else 2) + (1 if is_test(h.symbol) else 0)

    if not about_tests and any(not is_test(h.symbol) for h in hits):
        hits = [h for h in hits if not is_test(h.symbol)]
    ordered = sorted(enumerate(hits), key=lambda ih: (rank(ih[1]), ih[0]))
    return [h for _, h in ordered[:count]]


def _relevant(store: GraphReader, query: Query, hits: list[Hit]) -> list[Hit]:
    """Hits that name what was asked: an exact identifier, or a lexical match on at least MIN_COVERAGE
    of the question's distinct terms. The dense arm always returns something, so it cannot decide
    alone; one shared common word ("deployment" in a docstring) is not enough either."""
    terms = set(query.terms)
    docs = store.lexical_docs([h.id for h in hits if "lexical" in h.ranks])
    out = []
    for h in hits:
        words = set(docs.get(h.id, "").split())
        if "exact" in h.ranks or (terms and len(terms & words) / len(terms) >= MIN_COVERAGE):
            out.append(h)
    return out


def answerability(
    store: GraphReader, query: Query, hits: list[Hit], every: bool = False, embedder: Embedder | None = None
) -> dict[str, float]:
    """How likely the index can answer the question at all, from four signals of the hits search gave:

    - ``coverage``: the best hit's share of the question's IDF mass (the sum of the inverse document
      frequencies of the question's distinct terms that the hit's lexical text holds, over that sum for
      all of them): a hit that holds the rare words of the question covers most of it;
    - ``missing``: the share of that IDF mass held by terms no definition contains ("smtp" in a web
      client): what the question is about is not in the code;
    - ``cosine``: the best cosine between the question's and a hit's embedding, less the index's
      ``null_cosine`` (how close the best definition comes to a question about something else
      entirely, cg/ingest/baseline.py): the level of the raw cosine depends on the repository;
    - ``cosine_gap``: how far the best cosine stands above the other hits' mean;
    - ``absent``: how many names the question writes ("SMTP", "GraphQL", "Kerberos") no definition
      holds (``absent_names``);
    - ``unknown``: how many of the question's words no definition contains *and* the embedding
      model's tokenizer does not keep whole ("smtp", "graphql", "msgpack", "keychain"; not "decide",
      "pick" or "walk"): a question names a technology or a domain the code lacks, where an answerable
      one that misses words misses the ordinary words of its paraphrase. The tokenizer's vocabulary
      (~30k WordPieces learnt from general English text) is the frequency list, so no word list is
      written here and no package is added for it; words written as code (``compute_backoff``) are
      left out, since a misspelt name is not a missing topic.

    A logistic model over them (cg/queries/refusal_model.py, which weighs those it has weights for;
    fitted by benchmarks/refusal.py on answerable and unanswerable question sets, reported
    leave-one-repository-out) turns them into ``probability``; explain answers "nothing matches"
    below the model's threshold or when ``model_answers``' unknown-word rule says so, unless a hit is
    pinned (``pinned``: an exact identifier, a quoted message's literal). Cost: one vector read; one
    full-text count per distinct term when the model weighs coverage or missing (or ``every``, for the
    benchmark that fits it); ``unknown`` asks the full-text index only about the words the tokenizer
    splits."""
    used = set(REFUSAL_MODEL["coef"]) | ({"unknown"} if "unknown_cosine" in REFUSAL_MODEL else set())
    coverage = missing = 0.0
    if every or used & {"coverage", "missing"}:
        coverage, missing = _lexical_signals(store, query, hits)
    unknown = _unknown(store, query, hits, embedder) if embedder and (every or "unknown" in used) else 0
    absent = len(absent_names(store, query)) if every or REFUSAL_MODEL.get("refuse_absent_names") else 0
    ids = [h.id for h in hits]
    cosines = [0.0]
    if query.vector is not None and ids:
        vectors = store.embeddings(ids)
        q = query.vector / (float(np.linalg.norm(query.vector)) or 1.0)
        cosines = sorted((float(v @ q) / (float(np.linalg.norm(v)) or 1.0) for v in vectors.values()), reverse=True)
        cosines = cosines or [0.0]
    features = {
        "coverage": coverage,
        "missing": missing,
        "unknown": unknown,
        "absent": absent,
        "cosine": cosines[0] - float(store.get_meta("null_cosine") or 0.0),  # relative to the index's baseline
        "cosine_gap": cosines[0] - float(np.mean(cosines[1:])) if len(cosines) > 1 else 0.0,
    }
    return {**{k: round(v, 4) for k, v in features.items()}, "probability": round(probability(features), 4)}


def probability(signals: Mapping[str, float], model: Mapping[str, Any] = REFUSAL_MODEL) -> float:
    """The refusal model's probability that the index answers a question with these signals."""
    z = model["intercept"] + sum(w * signals[k] for k, w in model["coef"].items())
    return 1 / (1 + math.exp(-z))


def model_answers(signals: Mapping[str, float], model: Mapping[str, Any] = REFUSAL_MODEL) -> bool:
    """The refusal model's decision for a question no hit pins: the probability at its threshold or
    above, and for a question with ``unknown`` words (a technology no definition names) a cosine of at
    least ``unknown_cosine`` as well. The second rule only ever refuses more than the first: a question
    the cosine alone refused stays refused (a logistic model over both features, measured the same
    way, refused about as many unanswerable questions but moved the cosine threshold of every other
    question down to pay for it; benchmarks/refusal.py compares both). A question that writes a name
    no definition holds (``absent``, see ``absent_names``) is refused whatever its cosine when the
    model says ``refuse_absent_names``."""
    if model.get("refuse_absent_names") and signals.get("absent", 0) > 0:
        return False
    if probability(signals, model) < model["threshold"]:
        return False
    return not (signals.get("unknown", 0.0) > 0 and signals["cosine"] < model.get("unknown_cosine", -math.inf))


# Hits pinned by what the question names exactly: a definition's identifier ("exact"), or the string
# literal a quoted message comes from ("literal"). Either is the code the question is about, whatever
# the model says: no unanswerable question of the five sets pinned one (benchmarks/refusal.py), and
# 28 answerable ones quoting a message were left to the cosine, 5 of them below its threshold.
PINS = ("exact", "literal")


def pinned(hits: list[Hit]) -> bool:
    """Whether a hit is pinned (PINS): explain answers then, without asking the model."""
    return any(pin in h.ranks for h in hits for pin in PINS)


def _lexical_signals(store: GraphReader, query: Query, hits: list[Hit]) -> tuple[float, float]:
    """``answerability``'s coverage and missing."""
    terms = sorted(set(query.terms))
    ids = [h.id for h in hits]
    total = max(int(store.get_meta("lexical_docs") or 0), 1)
    df = {term: len(store.fulltext(term, LEXICAL_POOL, "Symbol")) for term in terms}
    idf = {term: math.log(1 + (total - n + 0.5) / (n + 0.5)) for term, n in df.items()}
    mass = sum(idf.values()) or 1.0
    missing = sum(idf[t] for t in terms if not df[t]) / mass
    docs = store.lexical_docs(ids)
    coverage = max((sum(idf[t] for t in terms if t in set(docs.get(i, "").split())) / mass for i in ids), default=0.0)
    return coverage, missing


def _unknown(store: GraphReader, query: Query, hits: list[Hit], embedder: Embedder) -> int:
    """``answerability``'s unknown: the tokenizer is asked first, then the hits' own text, and only a
    word that passes both costs a full-text lookup (usually none or one: a few ms even on Django)."""
    terms = set(query.terms)
    split = unknown_words({t: w for t, w in plain_words(query).items() if t in terms}, embedder)
    if not split:
        return 0
    held = {token for text in store.lexical_docs([h.id for h in hits]).values() for token in text.split()}
    return sum(1 for term in split if term not in held and not store.fulltext(term, 1, "Symbol"))


_SENTENCE_END = ".?!:;"  # the word after one of these is capitalised by grammar, not as a name


def absent_names(store: GraphReader, query: Query) -> list[str]:
    """The names the question writes (a technology, a product, a standard: "SMTP", "GraphQL",
    "Kerberos") that no definition's text holds, in any case: explain refuses such a question unless a
    hit is pinned (``model_answers``). Why a rule and not a feature of the model: how a question writes
    a word is evidence the cosine never sees. A question's ordinary words go missing from code all the
    time (it paraphrases: "turn", "decide", "hop"), but a name is what the question is about, and code
    that implements SMTP says "smtp" somewhere: in a name, a docstring, a comment or a literal (all in
    the lexical text). Left out: the question's first word and the first of each sentence (capitalised
    by grammar), "I", code (``_`` or ``.`` in the token), quoted text (a message's words are matched
    against literals and pinned there). An acronym's plural loses its "s" ("POSTs" is "POST").
    Cost: one full-text lookup per name, usually none."""
    text = _QUOTED_SPAN.sub(" ", query.text)
    for phrase in query.phrases:
        text = text.replace(phrase, " ")
    names: dict[str, str] = {}
    for m in _WORD.finditer(text):
        token = m.group(0)
        before = text[: m.start()].rstrip()
        if not before or before[-1] in _SENTENCE_END or token == "I" or "_" in token or "." in token:
            continue
        if not any(c.isupper() for c in token):
            continue
        written = token[:-1] if re.fullmatch(r"[A-Z]{2,}s", token) else token
        parts = split_identifier(written)
        if not parts:
            continue
        term = "".join(parts) if len(parts) > 1 else stem(parts[0])
        if len(term) > 1:
            names.setdefault(term, written)
    return [word for term, word in names.items() if not store.fulltext(term, 1, "Symbol")]


def plain_words(query: Query) -> dict[str, str]:
    """The question's words that are not written as code, by their lexical term (stem -> the word as
    written, lower case); question words and numbers left out. A word in mixed case or with digits
    ("GraphQL", "OAuth2", "POSTs") is one word, as the index holds it joined; a token with ``_`` or
    ``.`` is code."""
    words: dict[str, str] = {}
    for token in _WORD.findall(query.text):
        parts = [p for p in split_identifier(token) if p not in QUESTION_WORDS]
        if "_" in token or "." in token or not parts:
            continue
        if len(parts) > 1:
            words.setdefault("".join(split_identifier(token)), token.lower())
        elif parts[0].isalpha() and len(parts[0]) > 1:
            words.setdefault(stem(parts[0]), parts[0])
    return words


def unknown_words(words: dict[str, str], embedder: Embedder) -> list[str]:
    """The terms of ``words`` whose word the embedding model's tokenizer splits into pieces in every
    plain form (as written, without a plural or past-tense ending): words outside the general English
    its vocabulary was learnt from. Without a tokenizer of its own (an estimate), none."""
    counter = embedder.token_counter()
    if counter is approx_tokens:
        return []
    forms = {
        term: [word, *(word[: -len(end)] for end in _ENDINGS if word.endswith(end) and len(word) > len(end) + 2)]
        for term, word in words.items()
    }
    flat = [form for each in forms.values() for form in each]
    whole = {form for form, n in zip(flat, counter(flat), strict=True) if n == 1}
    return [term for term, each in forms.items() if not whole & set(each)]


def decorators(text: str) -> list[str]:
    """Decorator expressions written above a definition (``router.route("/x")`` for ``@router.route("/x")``)."""
    found = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("@"):
            found.append(stripped[1:])
        elif stripped.startswith(("def ", "async def ", "class ")):
            break
    return found


def decorator_names(text: str) -> set[str]:
    """The bare names of the decorators above a definition (``fixture`` for ``@pytest.fixture(scope=...)``,
    ``classmethod`` for ``@classmethod``): what rules that ask "is it a fixture, a classmethod" compare."""
    return {d.split("(", 1)[0].rsplit(".", 1)[-1].strip() for d in decorators(text)}


def entry_kind(node: dict[str, Any], decos: list[str], outside_callers: int) -> str:
    names = [d.split("(", 1)[0] for d in decos]
    if any(_ROUTE.search(n) for n in names):
        return "route"
    if any(_CLI.search(n) for n in names):
        return "cli"
    if node.get("name") == "main" or (node.get("kind") == "module" and "__main__" in (node.get("text") or "")):
        return "main"
    if is_test_function(node):
        return "test"
    if outside_callers:
        return "partial"
    public = not any(part.startswith("_") and not part.startswith("__") for part in node["qualname"].split("."))
    return "public" if public else "uncalled"


SEED_STEP = 0.1  # a seed's weight falls by this much per rank (seed_weights)


def explain(
    store: GraphReader,
    embedder: Embedder,
    query: Query | str,
    *,
    seeds: int = 3,
    depth: int = 2,
    fanout: int = 6,
    token_budget: int = 6000,
    max_nodes: int = 20,
    ranking: Ranking | None = None,
) -> Explanation:
    """How the code the question is about works: its call flow from the entry points, in call order,
    within ``token_budget`` (see the module docstring)."""
    store = for_answers(store)  # one answer asks about the same definitions again and again
    query = Query.of(query).with_vector(embedder)
    hits = search(store, embedder, query, limit=max(seeds * 4, 12), ranking=ranking)
    relevant = _relevant(store, query, hits)
    signals = answerability(store, query, hits, embedder=embedder)
    answerable = pinned(hits) or model_answers(signals)
    missing_vectors = unembedded(store)
    if missing_vectors:  # the model weighs cosines the index cannot give yet: the lexical rules decide
        names_absent = REFUSAL_MODEL.get("refuse_absent_names") and signals.get("absent", 0) > 0
        answerable = pinned(hits) or (bool(relevant) and not names_absent)
    result = Explanation(query.text, found=bool(hits) and answerable, token_budget=token_budget)
    result.answerability, result.unembedded = signals, missing_vectors
    if not result.found:
        result.absent = absent_names(store, query) if signals.get("absent") else []
        result.nearest = hits[:3]
        result.sources = related_sources(store, embedder, query, {})
        return result
    result.seeds = _pick_seeds(relevant or hits, seeds, query.about_tests)  # answerable: the best hits seed it
    weight = seed_weights(result.seeds)
    role = {h.id: "seed" for h in result.seeds}
    seed_ids = list(weight)
    up = expand(store, seed_ids, "in", depth + 1, fanout)
    relevance = callee_relevance(store, query, hits)
    down = expand(store, seed_ids, "out", depth, fanout, relevance=relevance)
    tests = [s for s in up if is_test(s.node)]
    # Example and tutorial code that calls into the flow shows how to use it, not how it works: not a
    # step, unless the question landed there (a seed in example code keeps its own flow).
    side = is_test if any(is_example(h.symbol) for h in result.seeds) else _usage_side
    up = [s for s in up if not side(s.node)]
    down = [s for s in down if not side(s.node) and not _constructor_twin(s, down)]
    down += _siblings(store, up, seed_ids, down, fanout, relevance, side)
    hub = store.caller_counts([s.id for s in down])
    via: dict[str, str] = {}
    for steps, name in ((up, "caller"), (down, "callee")):
        for s in steps:  # breadth-first: a step's parent is weighed before it
            penalty = hub_penalty(hub.get(s.id, 0)) if name == "callee" else 1.0
            trust = EDGE_TRUST.get(s.resolved_by, EDGE_TRUST["name"])
            w = weight.get(s.via, 0.0) * (DECAY if name == "callee" else DECAY_UP) * trust / penalty
            if w > weight.get(s.id, 0.0) and s.id not in role:
                weight[s.id], via[s.id] = w, s.via
                role[s.id] = name
    kept = _keep(seed_ids, weight, via, max_nodes)
    nodes = store.symbols(sorted(kept))
    _add_overrides(store, nodes, weight, role, side)
    edges = [
        FlowEdge(r.src, r.dst, r.line, r.resolved_by)
        for r in store.calls(sorted(n for n in nodes if role[n] != "override"), "out")
        if r.dst in nodes and r.src != r.dst
    ]
    edges += [FlowEdge(base, o, 0, "dispatch", "DISPATCH") for o, base in _override_bases(nodes, role)]
    edges += _add_decorators(store, nodes, weight, role)
    edges = sorted(set(edges), key=lambda e: (e.src, e.line, e.dst))
    result.nodes = {
        i: FlowNode(i, n, role[i], weight[i], decorators=decorators(n.get("text") or "")) for i, n in nodes.items()
    }
    result.edges = edges
    _fold_thin_steps(result)
    _mark_entries(store, result, tests)
    result.order = _flow_order(result)
    result.tests = _tests(tests, nodes)
    _spend_budget(result)
    shown = {i: result.nodes[i].node.get("qualname") or i for i in result.order}
    result.sources = related_sources(store, embedder, query, shown)
    return result


def _siblings(
    store: GraphReader,
    up: list[Step],
    seed_ids: list[str],
    down: list[Step],
    fanout: int,
    relevance: Callable[[list[CallRow]], dict[str, float]],
    side: Callable[[dict[str, Any]], bool],
) -> list[Step]:
    """The other callees of a seed's direct callers: what runs before and after the seed in the
    function that calls it (``full_dispatch_request`` runs ``preprocess_request``, then the seed
    ``dispatch_request``, then ``finalize_request``). Without them an answer shows the chain of
    callers down to the seed but not what each caller does around it. Weighed like any callee of
    the caller (one hop down from it), chosen by relevance within the fan-out."""
    callers = [s.id for s in up if s.depth == 1]
    if not callers:
        return []
    known = {s.id for s in down} | set(seed_ids) | {s.id for s in up}
    found = expand(store, callers, "out", 1, fanout, relevance=relevance)
    return [s for s in found if s.id not in known and not side(s.node)]


def _usage_side(node: dict[str, Any]) -> bool:
    """Test, example or tutorial code: what uses the library rather than the library itself."""
    return is_test(node) or is_example(node)


def seed_weights(seeds: list[Hit]) -> dict[str, float]:
    """Each seed's weight in the flow, from its rank among the seeds (1, 0.9, 0.8, ...), not from its
    score: the fusions score on different scales (the hand-set one a normalised sum, the learned one
    the odds of beating the first hit, often 0.1-0.3 for the second seed), and a seed picked as part
    of the answer must keep its callees in the flow whichever fusion picked it."""
    return {h.id: 1.0 - SEED_STEP * i for i, h in enumerate(seeds)}


def callee_relevance(store: GraphReader, query: Query, hits: list[Hit]) -> Callable[[list[CallRow]], dict[str, float]]:
    """The score by which a step's callees compete for its ``fanout`` places (cg/queries/expand.py),
    instead of source order, so that a getter called on the first line does not push out the call
    that matters further down. The sum of four readable parts:

    - 1 if search returned the callee for this question too (it is, or is near, another step: the
      flow between two hits runs through it);
    - the share of the question's terms its lexical text holds (0-1);
    - the cosine of its embedding with the question's (0-1 in practice);
    - its shape: a leaf of at most ``TRIVIAL_LINES`` lines that calls nothing in the repository (an
      accessor, a constant getter) loses TRIVIAL_PENALTY; a callee that calls others gains a little,
      ``0.1 * log2(1 + in-repo callees)``, since the flow goes on through it."""
    hit_ids = {h.id for h in hits}
    terms = set(query.terms)
    q = query.vector / (float(np.linalg.norm(query.vector)) or 1.0) if query.vector is not None else None

    def score(rows: list[CallRow]) -> dict[str, float]:
        nodes = {r.dst: r.other for r in rows if r.other_label == "Symbol"}
        ids = sorted(nodes)
        if not ids:
            return {}
        docs = store.lexical_docs(ids)
        vectors = store.embeddings(ids) if q is not None else {}
        out_degree: dict[str, set[str]] = {}
        for r in store.calls(ids, "out"):
            if r.other_label == "Symbol" and r.dst != r.src:
                out_degree.setdefault(r.src, set()).add(r.dst)
        scores = {}
        for i in ids:
            words = set(docs.get(i, "").split())
            value = (1.0 if i in hit_ids else 0.0) + (len(terms & words) / len(terms) if terms else 0.0)
            if i in vectors and q is not None:
                v = vectors[i]
                value += float(v @ q) / (float(np.linalg.norm(v)) or 1.0)
            calls = len(out_degree.get(i, ()))
            span = (nodes[i].get("end_line") or 0) - (nodes[i].get("start_line") or 0)
            value += 0.1 * math.log2(1 + calls) if calls else (-TRIVIAL_PENALTY if span < TRIVIAL_LINES else 0.0)
            scores[i] = round(value, 6)
        return scores

    return score


def hub_penalty(callers: int) -> float:
    """What a callee's weight is divided by: 1 up to HUB_FREE callers, then growing with the log of the rest."""
    return 1.0 + math.log2(1 + max(0, callers - HUB_FREE))


def _constructor_twin(step: Step, steps: list[Step]) -> bool:
    """``Cls.__init__`` reached from the same call site as ``Cls`` itself: one step is enough."""
    if not step.id.endswith(".__init__"):
        return False
    cls = step.id.removesuffix(".__init__")
    return any(s.id == cls and s.via == step.via and s.line == step.line for s in steps)


def _keep(seed_ids: list[str], weight: dict[str, float], via: dict[str, str], max_nodes: int) -> set[str]:
    ranked = sorted((i for i in weight if weight[i] >= MIN_WEIGHT), key=lambda i: (-weight[i], i))
    kept: set[str] = set(seed_ids)
    for node in ranked:
        if len(kept) >= max(max_nodes, len(seed_ids)):
            break
        while node not in kept:  # the chain back to a seed comes along, so the flow stays connected
            kept.add(node)
            node = via.get(node, node)
    return kept


def _add_overrides(
    store: GraphReader,
    nodes: dict[str, dict[str, Any]],
    weight: dict[str, float],
    role: dict[str, str],
    side: Callable[[dict[str, Any]], bool] = is_test,
) -> None:
    """Overrides in subclasses of the methods the flow calls: a call through the base may run them.
    The library's own only (``side`` says what is not): a test that subclasses a view or a gateway
    to exercise it is a test of the flow (listed as one when it calls into it), not a step of how the
    code works, as callers and callees in test files are left out of the steps."""
    called = [n for i, n in nodes.items() if role[i] in ("callee", "seed")]
    found = related_methods(store, called, "in")
    extra = store.symbols(sorted({o["id"] for _, o in found} - set(nodes)))
    for base, override in found:
        if override["id"] in extra and override["id"] not in role and not side(extra[override["id"]]):
            nodes[override["id"]] = {**extra[override["id"]], "overrides": base}
            weight[override["id"]] = weight[base] * DECAY
            role[override["id"]] = "override"


def _add_decorators(
    store: GraphReader, nodes: dict[str, dict[str, Any]], weight: dict[str, float], role: dict[str, str]
) -> list[FlowEdge]:
    """The in-repo decorators of the flow's definitions join it, each one step lighter than what it wraps."""
    found = store.decorators(sorted(nodes))
    extra = store.symbols(sorted({d for d, _, _ in found} - set(nodes)))
    edges = []
    for decorator, decorated, line in found:
        if decorator in extra and decorator not in role:
            nodes[decorator] = extra[decorator]
            weight[decorator] = weight[decorated] * DECAY
            role[decorator] = "decorator"
        if decorator in nodes and decorator != decorated:
            edges.append(FlowEdge(decorator, decorated, line, "decorator", "DECORATES"))
    return edges


_READ_NODES = (
    ast.Attribute,
    ast.Name,
    ast.Constant,
    ast.Subscript,
    ast.Compare,
    ast.BoolOp,
    ast.UnaryOp,
    ast.expr_context,
    ast.cmpop,
    ast.boolop,
    ast.unaryop,
)


def thin_shape(text: str) -> str | None:
    """ "adapter" for a definition whose body (its docstring aside) is one statement that returns or
    awaits one call (``return self._send(request)``, ``return asyncio.run(self.aclose())``): a sync/async
    wrapper or a thin delegating function; "accessor" for one whose body returns a read of attributes,
    names, constants and subscripts (a comparison or ``not`` of them included) and calls nothing; None
    otherwise. The text is parsed by ``ast``, never run."""
    try:
        tree = ast.parse(textwrap.dedent(text))
    except SyntaxError:
        return None
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)), None)
    if fn is None:
        return None
    body = (
        fn.body[1:]
        if fn.body and isinstance(fn.body[0], ast.Expr) and isinstance(fn.body[0].value, ast.Constant)
        else fn.body
    )
    if len(body) != 1 or not isinstance(body[0], ast.Return | ast.Expr):
        return None
    value = body[0].value
    if value is None:
        return None
    calls = [n for n in ast.walk(value) if isinstance(n, ast.Call)]
    if not calls:  # a read: ``self._timeout``, ``self.config["DEBUG"]``, ``self._app is not None``
        return "accessor" if all(isinstance(n, _READ_NODES) for n in ast.walk(value)) else None
    if isinstance(value, ast.Await):
        value = value.value
    return "adapter" if isinstance(value, ast.Call) and len(calls) <= 2 else None


def _fold_thin_steps(result: Explanation) -> None:
    """Adapters and accessors are not steps (see ``thin_shape``): an adapter with one callee in the flow
    is folded into that callee (its callers call the callee directly, at their own lines), an accessor
    that calls nothing into each step that calls it, and an error class every step that reaches it
    raises (``raise FormDataRoutingRedirect(request)``) into those steps; the step lists what was folded
    into it, cited. Seeds, overrides, decorators and anything on a DISPATCH or DECORATES edge stay steps."""
    for i in sorted(result.nodes):
        node = result.nodes[i]
        if node.role not in ("caller", "callee") or any(i in (e.src, e.dst) for e in result.edges if e.type != "CALLS"):
            continue
        if entry_kind(node.node, node.decorators, 0) in ("route", "cli", "main"):
            continue  # a one-line route or command is still where the flow starts
        shape = thin_shape(node.node.get("text") or "")
        outs = [e for e in result.edges if e.src == i]
        ins = [e for e in result.edges if e.dst == i]
        if ins and not outs and node.node.get("kind") == "class" and all(_raises_at(result, e) for e in ins):
            shape = "raised"  # an error the flow raises: what it raises, not a step of how it works
            into, redirected = sorted({e.src for e in ins}), []
        elif shape == "adapter" and len(outs) == 1 and outs[0].dst != i:
            into = [outs[0].dst]
            redirected = [FlowEdge(e.src, outs[0].dst, e.line, e.resolved_by) for e in ins if e.src != outs[0].dst]
        elif shape == "accessor" and not outs and ins:
            into, redirected = sorted({e.src for e in ins}), []
        else:
            continue
        for target in into:
            result.nodes[target].folded.append(
                {"id": i, "qualname": node.node.get("qualname"), "citation": citation(node.node), "shape": shape}
            )
            result.nodes[target].weight = max(result.nodes[target].weight, node.weight)
        del result.nodes[i]
        result.edges = sorted(
            {e for e in result.edges if i not in (e.src, e.dst)} | set(redirected), key=lambda e: (e.src, e.line, e.dst)
        )


def _raises_at(result: Explanation, edge: FlowEdge) -> bool:
    """Whether the caller's line of ``edge`` is a ``raise`` statement (the call builds the error raised)."""
    return source_line(result.nodes[edge.src].node, edge.line).lstrip().startswith("raise ")


def _override_bases(nodes: dict[str, dict[str, Any]], role: dict[str, str]) -> list[tuple[str, str]]:
    return [(i, n["overrides"]) for i, n in nodes.items() if role[i] == "override" and n.get("overrides")]


def _mark_entries(store: GraphReader, result: Explanation, tests: list[Step]) -> None:
    called = {e.dst for e in _calls_within(result)}
    roots = [i for i, n in result.nodes.items() if i not in called and n.role not in ("override", "decorator")]
    outside: dict[str, int] = {}
    for row in store.calls(roots, "in"):
        if not is_test(row.other) and row.src not in result.nodes:
            outside[row.dst] = outside.get(row.dst, 0) + 1
    for i in roots:
        node = result.nodes[i]
        node.entry = entry_kind(node.node, node.decorators, outside.get(i, 0))
    if not any(n.entry and n.entry != "partial" for n in result.nodes.values()) and tests:
        # last resort: the tests that drive the flow are where it visibly starts
        for s in tests:
            if is_test_function(s.node) and s.via in result.nodes and s.id not in result.nodes:
                full = store.symbols([s.id]).get(s.id, s.node)
                result.nodes[s.id] = FlowNode(s.id, full, "caller", result.nodes[s.via].weight * DECAY, "test")
                result.edges.append(FlowEdge(s.id, s.via, s.line, s.resolved_by))
                break


def _calls_within(result: Explanation) -> list[FlowEdge]:
    return [e for e in result.edges if e.type == "CALLS"]


def _flow_order(result: Explanation) -> list[str]:
    out_edges: dict[str, list[FlowEdge]] = {}
    wrapped_by: dict[str, list[FlowEdge]] = {}
    for e in result.edges:
        out_edges.setdefault(e.src, []).append(e)
        if e.type == "DECORATES":
            wrapped_by.setdefault(e.dst, []).append(e)
    reach: dict[str, float] = {}

    def reachable(start: str) -> set[str]:
        seen, stack = {start}, [start]
        while stack:
            for e in out_edges.get(stack.pop(), []):
                if e.dst not in seen:
                    seen.add(e.dst)
                    stack.append(e.dst)
        return seen

    entries = [i for i, n in result.nodes.items() if n.entry]
    seeds = [h.id for h in result.seeds]
    first_seed: dict[str, int] = {}  # the best-ranked seed each entry leads to (len(seeds): none)
    for i in entries:
        reached = reachable(i)
        reach[i] = round(sum(sorted(result.nodes[j].weight for j in reached)), 9)  # no set-order jitter
        first_seed[i] = next((rank for rank, seed in enumerate(seeds) if seed in reached), len(seeds))
    entries.sort(key=lambda i: (first_seed[i], _ENTRY_RANK[result.nodes[i].entry], -reach[i], i))
    order: list[str] = []
    placed: set[str] = set()

    def visit(node: str) -> None:
        placed.add(node)
        order.append(node)
        for e in sorted(wrapped_by.get(node, []), key=lambda e: (e.line, e.src)):  # its decorators come next
            if e.src not in placed:
                visit(e.src)
        for e in sorted(out_edges.get(node, []), key=lambda e: (e.type != "CALLS", e.line, e.dst)):
            if e.dst not in placed:
                visit(e.dst)

    for i in entries:
        if i not in placed:
            visit(i)
    for i in sorted(result.nodes, key=lambda i: (-result.nodes[i].weight, i)):  # cycles without an entry
        if i not in placed:
            visit(i)
    return order


def _tests(tests: list[Step], nodes: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for s in tests:
        if is_test_function(s.node) and s.via in nodes and s.id not in nodes:
            out.append({"id": s.id, "qualname": s.node.get("qualname"), "citation": citation(s.node), "calls": s.via})
    return out


def _heading(position: int, node: dict[str, Any]) -> str:
    return f"## {position}. {node.get('qualname')} ({node.get('kind')}) {citation(node)}"


def _tokens(chars: int) -> int:
    return -(-chars // CHARS_PER_TOKEN)


def _spend_budget(result: Explanation) -> None:
    """Signatures first for every step, then full bodies by weight while they fit; drop the lightest
    steps only when even the signatures do not fit (the first entry and the first seed stay)."""
    budget = result.token_budget * CHARS_PER_TOKEN
    by_weight = sorted(result.order, key=lambda i: (-result.nodes[i].weight, result.order.index(i)))
    keep_always = {result.order[0], result.seeds[0].id} if result.order else set()
    outlined = set()
    for i in result.order:  # a class step shows its outline, never its whole body
        node = result.nodes[i]
        if node.node.get("kind") == "class" and node.node.get("text"):
            outline = class_outline(node.node["text"])
            if outline != node.node["text"]:
                node.node = {**node.node, "text": outline}
                outlined.add(i)
    trimmed = {i: trim_body(result.nodes[i].node.get("text") or "", result.nodes[i].node) for i in result.order}
    cost = {i: len(trimmed[i]) + len(_heading(0, result.nodes[i].node)) for i in result.order}
    used = sum(cost.values())
    for i in reversed(by_weight):
        if used <= budget:
            break
        if i in keep_always:
            continue
        used -= cost[i]
        node = result.nodes[i]
        result.omitted.append(
            {
                "id": i,
                "qualname": node.node.get("qualname"),
                "citation": citation(node.node),
                "tokens": _tokens(cost[i]),
            }
        )
        del result.nodes[i]
    result.order = [i for i in result.order if i in result.nodes]
    result.edges = [e for e in result.edges if e.src in result.nodes and e.dst in result.nodes]
    for i in result.order:
        result.nodes[i].code, result.nodes[i].code_state = trimmed[i], "trimmed"
    for i in by_weight:
        if i not in result.nodes:
            continue
        full = result.nodes[i].node.get("text") or ""
        if result.omitted and full != trimmed[i]:
            continue  # definitions were dropped: no body is shown in full
        extra = len(full) - len(trimmed[i])
        if extra <= 0:  # nothing was cut, or the cut saved nothing: the whole body costs no more
            result.nodes[i].code, result.nodes[i].code_state = full, "full"
            used += extra
        elif used + extra <= budget:
            result.nodes[i].code, result.nodes[i].code_state = full, "full"
            used += extra
    for i in outlined:
        if i in result.nodes and result.nodes[i].code_state == "full":
            result.nodes[i].code_state = "outline"
    result.tokens_used = _tokens(used)


def class_outline(text: str) -> str:
    """A class as a step: its decorators, header and docstring, then one line per member at the class
    body's own indentation (fields, decorators, the ``def`` lines, a signature over several lines whole),
    each method's body left out. A flow step needs what the class offers, not every method's code (the
    methods the flow runs are steps of their own)."""
    lines = text.splitlines()
    head = next((n for n, line in enumerate(lines) if line.lstrip().startswith("class ")), None)
    if head is None:
        return text
    body = [n for n in range(head + 1, len(lines)) if lines[n].strip()]
    if not body:
        return text
    indent = len(lines[body[0]]) - len(lines[body[0]].lstrip())
    out = lines[: head + 1]
    in_signature = False
    for line in lines[head + 1 :]:
        depth = len(line) - len(line.lstrip())
        stripped = line.strip()
        if in_signature or (stripped and depth == indent):
            if stripped.startswith(("def ", "async def ")) or in_signature:
                in_signature = not stripped.endswith(":")
                out.append(line + (" ..." if not in_signature else ""))
            else:
                out.append(line)
        elif not stripped and out and out[-1].strip():
            out.append("")
    if len(out) < len(lines):
        out.append(f"{' ' * indent}# method bodies left out: a class step shows its outline")
    return "\n".join(out).rstrip()


def trim_body(text: str, node: dict[str, Any]) -> str:
    """The definition's head: decorators, signature and docstring, then a line saying what was cut."""
    lines = text.splitlines()
    end = 0
    for index, line in enumerate(lines):  # the signature ends at the first line closing with ':'
        if line.rstrip().endswith(":") and not line.lstrip().startswith("@"):
            end = index + 1
            break
    else:
        return text
    if node.get("docstring") and end < len(lines):
        quote = next((q for q in ('"""', "'''") if q in lines[end]), None)
        if quote:
            close = end if lines[end].count(quote) >= 2 else end + 1
            while close < len(lines) and quote not in lines[close]:
                close += 1
            end = min(close + 1, len(lines))
    rest = len(lines) - end
    if rest <= 0:
        return text
    body = next((line for line in lines[end:] if line.strip()), "    ")
    indent = " " * (len(body) - len(body.lstrip()))
    more = f"{rest} more line{'s' if rest != 1 else ''}"
    marker = f"{indent}...  # {more} (trimmed by the token budget)"
    if len(marker) >= len("\n".join(lines[end:])):
        return text  # the marker would cost as much as the lines it replaces: keep them
    return "\n".join([*lines[:end], marker])


def render_markdown(result: Explanation) -> str:
    """A numbered walkthrough in flow order; each step says how it is reached and what it calls next."""
    out: list[str] = [f"# How it works: {result.query}", ""]
    if result.unembedded:
        out += [partial_vectors_note(result.unembedded), ""]
    if not result.found:
        if result.absent:
            names = ", ".join(result.absent)
            out.append(f"Nothing in the index matches this question: no definition mentions {names}.")
        else:
            out.append(
                "Nothing in the index matches this question: no definition holds enough of its words or names it."
            )
        if result.nearest:
            near = ", ".join(f"{h.symbol['qualname']} {citation(h.symbol)}" for h in result.nearest)
            out.append(f"Closest by meaning alone (probably unrelated): {near}.")
        out.append("Try other words, an identifier, or `cg search`; is the repository indexed (`cg index`)?")
        out.extend(render_sources(result.sources))
        return "\n".join(out) + "\n"
    position = {i: n for n, i in enumerate(result.order, start=1)}
    entries = result.entries
    starts = ", ".join(f"{result.nodes[i].node.get('qualname')} ({result.nodes[i].entry})" for i in entries)
    out.append(f"{len(result.order)} definitions in call order; the flow starts at {starts or 'the seeds'}.")
    out.append("")
    incoming: dict[str, list[FlowEdge]] = {}
    outgoing: dict[str, list[FlowEdge]] = {}
    for e in result.edges:
        incoming.setdefault(e.dst, []).append(e)
        outgoing.setdefault(e.src, []).append(e)

    def ref(i: str) -> str:
        return f"{position[i]}. {short_id(i)}"

    for i in result.order:
        node = result.nodes[i]
        n = node.node
        out.append(_heading(position[i], n))
        if n.get("docstring"):
            out.extend([f"> {n['docstring'].splitlines()[0]}", ""])
        facts = []
        if node.entry:
            how = _ENTRY_TEXT[node.entry]
            if node.entry in ("route", "cli") and node.decorators:
                how += f" (@{node.decorators[0]})"
            facts.append(f"Entry point: {how}.")
        callers = [e for e in incoming.get(i, []) if e.type == "CALLS"]
        if callers:
            facts.append("Called by: " + "; ".join(f"{ref(e.src)} at line {e.line}" for e in callers))
        if node.role == "override" and n.get("overrides") in position:
            facts.append(f"Overrides {ref(n['overrides'])}: a call through the base method may run this one.")
        if node.role == "seed":
            facts.append("Matches the question.")
        for kind, text in (
            ("adapter", "Reached through thin wrappers"),
            ("accessor", "Uses accessors"),
            ("raised", "Raises"),
        ):
            folded = [f"{f['qualname']} {f['citation']}" for f in node.folded if f["shape"] == kind]
            if folded:
                facts.append(f"{text} (not steps of their own): " + "; ".join(folded))
        calls = [e for e in outgoing.get(i, []) if e.type == "CALLS"]
        if calls:
            facts.append("Calls: " + "; ".join(f"{ref(e.dst)} (line {e.line}, {e.resolved_by})" for e in calls))
        dispatch = [e for e in outgoing.get(i, []) if e.type == "DISPATCH"]
        if dispatch:
            facts.append("May dispatch to: " + "; ".join(ref(e.dst) for e in dispatch))
        wraps = [e for e in outgoing.get(i, []) if e.type == "DECORATES"]
        if wraps:
            facts.append(
                "; ".join(f"@{_written(result, e, n)} wraps {ref(e.dst)} (line {e.line})" for e in wraps) + "."
            )
        wrapped = [e for e in incoming.get(i, []) if e.type == "DECORATES"]
        if wrapped:
            facts.append("Wrapped by: " + "; ".join(f"{ref(e.src)} (line {e.line})" for e in wrapped))
        out.extend(f"- {fact}" for fact in facts)
        out.append("")
        if node.code is not None:
            out.extend(["```python", node.code, "```", ""])
    if result.tests:
        out.append("## Tests that exercise this flow")
        out.extend(f"- {t['qualname']} {t['citation']} calls {short_id(t['calls'])}" for t in result.tests)
        out.append("")
    trimmed = [i for i in result.order if result.nodes[i].code_state == "trimmed"]
    if trimmed or result.omitted:
        out.append(f"## Left out to stay within {result.token_budget} tokens (raise --budget to see more)")
        if trimmed:
            out.append("- bodies trimmed to their signature: " + ", ".join(ref(i) for i in trimmed))
        for item in result.omitted:
            out.append(f"- left out: {item['qualname']} {item['citation']} (~{item['tokens']} tokens)")
    out.extend(render_sources(result.sources))
    return "\n".join(out).rstrip() + "\n"


def _written(result: Explanation, edge: FlowEdge, decorator: dict[str, Any]) -> str:
    """The decorator as the decorated definition writes it (``router.route`` for ``Router.route``)."""
    name = decorator.get("name") or short_id(edge.src)
    for written in result.nodes[edge.dst].decorators:
        callee = written.split("(", 1)[0].strip()
        if callee.rsplit(".", 1)[-1] == name:
            return callee
    return name


def _mermaid_text(text: str) -> str:
    """Text safe inside a double-quoted Mermaid label: quotes, angle brackets and pipes as entity codes."""
    for raw, code in (("&", "#amp;"), ('"', "#quot;"), ("<", "#lt;"), (">", "#gt;"), ("|", "#124;")):
        text = text.replace(raw, code)
    return text


def render_mermaid(result: Explanation) -> str:
    """A top-down flowchart of the flow (renders in GitHub Markdown inside a ```mermaid fence)."""
    lines = ["flowchart TD"]
    if not result.found:
        lines.append(f'  empty["{_mermaid_text("nothing found for: " + result.query)}"]')
        return "\n".join(lines) + "\n"
    ids = {i: f"n{k}" for k, i in enumerate(result.order)}
    for i in result.order:
        node = result.nodes[i]
        n = node.node
        label = _mermaid_text(short_id(i)) + "<br/>" + _mermaid_text(f"{n.get('path')}:{n.get('start_line')}")
        style = ":::entry" if node.entry else (":::seed" if node.role == "seed" else "")
        lines.append(f'  {ids[i]}["{label}"]{style}')
    for e in result.edges:
        if e.type == "DISPATCH":
            lines.append(f'  {ids[e.src]} -.->|"overridden by"| {ids[e.dst]}')
        elif e.type == "DECORATES":
            lines.append(f'  {ids[e.src]} -.->|"wraps"| {ids[e.dst]}')
        else:
            lines.append(f'  {ids[e.src]} -->|"line {e.line}"| {ids[e.dst]}')
    lines.append("  classDef entry fill:#dbeafe,stroke:#1d4ed8")
    lines.append("  classDef seed fill:#fef3c7,stroke:#b45309")
    return "\n".join(lines) + "\n"
