"""Written by benchmarks/refusal.py (``--write-model``); do not edit by hand.

The logistic model behind explain's "Nothing in the index matches" (cg/queries/explain.py,
``answerability``): weights of its three features, the intercept, and the probability below which
explain refuses; fitted on every question set named in ``fitted_on``."""

from typing import Any

MODEL: dict[str, Any] = {
    "coef": {"cosine": 5.4447},
    "intercept": -1.3885,
    "threshold": 0.4442,
    "fitted_on": ["examples/shop", "httpx 0.27.2"],
}
