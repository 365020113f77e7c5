"""The index's "nothing matches" baseline: how similar the best definition looks to a question about
something else entirely.

The best cosine between a question and a definition is what tells an answerable question from one the
code cannot answer (cg/queries/explain.py, ``answerability``), but its level depends on the
repository: with more definitions, the best of them lies closer to any question by chance. So each
index run embeds ``PROBES`` (questions about cooking, astronomy, sport... that no code base answers)
and stores the mean of their best cosines as the meta value ``null_cosine``; explain reads the
question's best cosine relative to it. Measured on examples/shop and httpx 0.27.2 (benchmarks/refusal.py):
0.11 and 0.16, for off-topic questions of 0.22 and 0.32 and answerable ones of 0.49 and 0.54. The probe
vectors come from the embedding cache after the first run, so a run without changes does not load
the model for them.
"""

from __future__ import annotations

from typing import Protocol, cast

import numpy as np

PROBES = (
    "how is bread dough kneaded and proofed before baking?",
    "which planets have rings made of ice?",
    "how do migratory birds navigate across oceans?",
    "what are the rules of chess castling?",
    "how is olive oil pressed from the fruit?",
    "why does the moon have phases?",
    "how are violins varnished by luthiers?",
    "what causes volcanic eruptions?",
    "how does a sailboat tack against the wind?",
    "how is cheese aged in caves?",
    "what is the offside rule in football?",
    "how do bees communicate by dancing?",
)
POOL = 12  # candidates per probe whose exact cosine is taken


class _Vectors(Protocol):
    def vector(self, embedding: np.ndarray, limit: int) -> list[tuple[str, float]]: ...
    def embeddings(self, ids: list[str]) -> dict[str, np.ndarray]: ...
    def set_meta(self, key: str, value: str) -> None: ...


def best_cosine(store: object, vector: np.ndarray, pool: int = POOL) -> float:
    """The exact cosine of the definition closest to ``vector`` (0.0 in an empty index)."""
    reader = cast(_Vectors, store)  # every store reads vectors; the writer protocol does not say so
    ids = [i for i, _ in reader.vector(vector, pool)]
    vectors = reader.embeddings(ids)
    if not vectors:
        return 0.0
    q = vector / (float(np.linalg.norm(vector)) or 1.0)
    return max(float(v @ q) / (float(np.linalg.norm(v)) or 1.0) for v in vectors.values())


def write_null_cosine(store: object, vectors: np.ndarray) -> float:
    """Measure the baseline over the PROBES' ``vectors`` and store it as ``null_cosine``; returns it."""
    # Kùzu scans every vector per search, so there all probes are taken in one scan (``best_cosines``:
    # 0.05 s on Django against 0.45 s probe by probe, the same values to 1e-7)
    many = getattr(store, "best_cosines", None)
    value = float(np.mean(many(vectors) if many is not None else [best_cosine(store, v) for v in vectors]))
    cast(_Vectors, store).set_meta("null_cosine", f"{value:.4f}")
    return value
