"""The plain lexical baseline the retrieval sets are measured against: Okapi BM25 over 1,000-character
windows (200 characters of overlap) of every file cg would walk, tokenized with identifier splitting
(cg.lexical.analyze: ``parse_header`` and ``parseHeader`` give ``parseheader`` and ``parse``, ``header``).
A window counts for a gold definition when their line ranges overlap, so a baseline answer is
scored on the same gold entries as cg's.

Hand-written (25 lines of numpy) rather than a BM25 package: none is among the project's
dependencies, and the formula with its two usual constants (k1 = 1.5, b = 0.75) is all it needs.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cg.ingest.walk import WalkReport, walk
from cg.lexical import analyze

WINDOW, OVERLAP = 1000, 200
K1, B = 1.5, 0.75


@dataclass(frozen=True)
class Window:
    path: str
    first: int
    last: int
    text: str

    def overlaps(self, path: str, lo: int, hi: int) -> bool:
        return self.path == path and self.first <= hi and self.last >= lo


def windows(repo: Path) -> list[Window]:
    """1,000-character windows with 200 characters of overlap, per file cg walks (UTF-8 text)."""
    out = []
    for source in walk(repo, WalkReport()):
        try:
            text = source.data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        for start in range(0, max(len(text) - OVERLAP, 1), WINDOW - OVERLAP):
            chunk = text[start : start + WINDOW]
            first = text.count("\n", 0, start) + 1
            out.append(Window(source.path, first, first + chunk.count("\n"), chunk))
    return out


class BM25:
    """Okapi BM25 over analyzed token lists."""

    def __init__(self, docs: Sequence[str]) -> None:
        self.tfs = [Counter(analyze(d)) for d in docs]
        self.lengths = [sum(tf.values()) for tf in self.tfs]
        self.avg = sum(self.lengths) / max(len(self.lengths), 1)
        df: Counter[str] = Counter()
        for tf in self.tfs:
            df.update(tf.keys())
        n = len(self.tfs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.postings: dict[str, list[int]] = {}
        for i, tf in enumerate(self.tfs):
            for t in tf:
                self.postings.setdefault(t, []).append(i)

    def top(self, query: str, k: int = 10) -> list[int]:
        scores: dict[int, float] = {}
        for term in set(analyze(query)):
            idf = self.idf.get(term)
            if idf is None:
                continue
            for i in self.postings[term]:
                f = self.tfs[i][term]
                norm = K1 * (1 - B + B * self.lengths[i] / self.avg)
                scores[i] = scores.get(i, 0.0) + idf * f * (K1 + 1) / (f + norm)
        return [i for i, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:k]]


def ranks(found: Sequence[Window], golds: Sequence[tuple[str, int, int]]) -> list[int | None]:
    """1-based rank of the first window overlapping each gold range (None: not among ``found``)."""
    return [next((r for r, w in enumerate(found, 1) if w.overlaps(*g)), None) for g in golds]
