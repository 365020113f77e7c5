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


def analyze_query(text: str) -> str:
    tokens = analyze(text)
    kept = _tokens(text, QUESTION_WORDS)
    return " ".join(kept if kept and len(tokens) > 1 else tokens)
