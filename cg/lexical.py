"""The lexical arm's analyzer, applied to indexed text and to queries alike, on every backend.

Backends tokenize differently (Kùzu splits on ``_``, Lucene's standard analyzer does not), so we do
not rely on theirs. We emit only lower-case alphanumeric tokens, which every tokenizer keeps intact:
each identifier once joined (``handle_invoice_paid`` and ``HandleInvoicePaid`` both give
``handleinvoicepaid``) and once split into its words (``handle invoice paid``). A query for the exact
identifier then matches the rare joined token (high IDF) and a query in words still matches the parts.
Dotted paths (``os.path.join``) give their joined form and every segment.

Words are stemmed (Snowball's English stemmer, the Porter2 algorithm every IR toolkit ships): a
question says "retries", "refunding", "invoices" where the code says ``retry``, ``refund``,
``Invoice``, and an unstemmed index matched none of them, in the lexical arm, in explain's
answerability signals (a word counted as absent from the code when only its inflection was
missing) and in quoted messages alike. The joined identifier is not stemmed: it is the exact name,
and stays rare. Question words are dropped before stemming ("does" would stem to "doe").
snowballstemmer: pure Python, no build step, the stemmer Sphinx's own search uses; cached per word.
"""

from __future__ import annotations

import re
from functools import lru_cache

import snowballstemmer

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*|[0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_STOP = frozenset({"self", "cls", "the", "a", "an", "of", "to", "and", "or", "in", "is", "it", "def", "return"})


def split_identifier(identifier: str) -> list[str]:
    """``HTTPRetryPolicy2`` -> ``['http', 'retry', 'policy', '2']``; ``schedule_payment_retry`` ->
    ``['schedule', 'payment', 'retry']``."""
    words: list[str] = []
    for piece in re.split(r"[_.]+", identifier):
        words.extend(w.lower() for w in _CAMEL.findall(piece))
    return words


_STEMMER = snowballstemmer.stemmer("english")


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A lower-case word's stem (``retries`` -> ``retri``, ``refunding`` -> ``refund``)."""
    return _STEMMER.stemWord(word)


@lru_cache(maxsize=1 << 16)
def _parts(ident: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """One identifier's joined form (empty for a one-word name), its dotted segments joined, and its
    words, computed once per identifier: code repeats its names, and splitting them was half of a big
    repository's chunk stage (Django: 6M splits of ~100k distinct names)."""
    words = tuple(split_identifier(ident))
    if len(words) < 2:
        return "", (), words
    segments = tuple("".join(split_identifier(seg)) for seg in ident.split(".") if seg) if "." in ident else ()
    return "".join(words), segments, words


@lru_cache(maxsize=1 << 16)
def _ident_tokens(ident: str) -> tuple[str, ...]:
    """``_tokens`` of one identifier with nothing dropped (indexed text: every definition's)."""
    joined, segments, words = _parts(ident)
    head = (joined, *segments) if joined else ()
    return (*head, *(stem(w) for w in words if w not in _STOP))


def _tokens(text: str, drop: frozenset[str] = frozenset()) -> list[str]:
    """``analyze``'s tokens, leaving out the words in ``drop`` (compared before stemming)."""
    tokens: list[str] = []
    if not drop:
        for ident in _IDENT.findall(text):
            tokens.extend(_ident_tokens(ident))
        return tokens
    for ident in _IDENT.findall(text):
        joined, segments, words = _parts(ident)
        if joined:
            if joined not in drop:
                tokens.append(joined)
            tokens.extend(segments)
        tokens.extend(stem(w) for w in words if w not in _STOP and w not in drop)
    return tokens


def analyze(text: str) -> list[str]:
    return _tokens(text)


def analyze_text(text: str) -> str:
    return " ".join(analyze(text))


# Words of a question, not of the code it asks about ("how does the client follow redirects?").
# Dropped from queries only, never from indexed text, and never from a one-word query. Measured
# with `cg eval` on both question sets: recall@10 +0.01 to +0.03 (benchmarks/RESULTS.md).
QUESTION_WORDS = frozenset(
    "how does do did what where when which who why is are was were we our us you your i my it its happens "
    "happen there this that these those be been any can should would will if then than so into".split()
)


# Abbreviations code writes for the words a question spells out: "where are environment variables
# read" must reach ``resolve_envvar_value``, whose words (``resolve``, ``envvar``, ``value``) hold no
# "environment". A question's word (or two adjacent words) adds the short forms as extra lexical terms
# (``query_expansions``); indexed text is left alone, so the index does not change and a question
# that writes the short form matches as before. Only abbreviations common across languages and code
# bases, each unambiguous for its long form: a word's stem -> the short forms as the index tokenizes them.
# Words code writes in full as often as short are left out (request, response, function, length,
# number, message, ...): on the development sets (shop, httpx) their short forms (req, resp, fn, len)
# matched local variables everywhere and moved the right definitions down.
ABBREVIATIONS: dict[str, tuple[str, ...]] = {
    "environ": ("env",),
    "environ variabl": ("envvar", "env"),
    "variabl": ("var",),
    "configur": ("config", "conf", "cfg"),
    "context": ("ctx",),
    "paramet": ("param",),
    "argument": ("arg",),
    "attribut": ("attr",),
    "authent": ("auth",),
    "author": ("auth",),
    "connect": ("conn",),
    "databas": ("db",),
    "directori": ("dir",),
    "address": ("addr",),
    "initi": ("init",),
    "templat": ("tmpl",),
    "callback": ("cb",),
    "except": ("exc",),
    "implement": ("impl",),
    "temporari": ("tmp", "temp"),
    "packag": ("pkg",),
    "maximum": ("max",),
    "minimum": ("min",),
    "repositori": ("repo",),
    "librari": ("lib",),
    "synchron": ("sync",),
    "asynchron": ("async",),
    "administr": ("admin",),
    "applic": ("app",),
    "dictionari": ("dict",),
    "regular express": ("regex",),
    "certif": ("cert",),
    "password": ("passwd",),
    "millisecond": ("ms",),
    "identifi": ("id",),
    "descript": ("desc",),
    "transact": ("txn",),
}


def query_expansions(text: str) -> tuple[str, ...]:
    """The short forms (``ABBREVIATIONS``) of a question's words and adjacent word pairs, in order,
    without repeats and without any the question already holds."""
    stems = [stem(w.lower()) for w in re.findall(r"[A-Za-z]+", text)]
    found: dict[str, None] = {}
    for i, word in enumerate(stems):
        for key in (f"{stems[i - 1]} {word}" if i else "", word):
            for short in ABBREVIATIONS.get(key, ()):
                found[short] = None
    held = set(analyze(text))
    return tuple(short for short in found if short not in held)


def analyze_query(text: str) -> str:
    tokens = analyze(text)
    kept = _tokens(text, QUESTION_WORDS)
    return " ".join(kept if kept and len(tokens) > 1 else tokens)
