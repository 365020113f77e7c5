"""Written by benchmarks/refusal.py (``--write-model``); do not edit by hand.

The logistic model behind explain's "Nothing in the index matches" (cg/queries/explain.py,
``answerability``): weights of its three features, the intercept, and the probability below which
explain refuses; fitted on every question set named in ``fitted_on``."""

from typing import Any

MODEL: dict[str, Any] = {
    "coef": {"cosine": 5.6073},
    "intercept": -1.6508,
    "threshold": 0.3841,
    "fitted_on": ["Jinja2 3.1.4", "cobra v1.8.1 (Go)", "examples/shop", "httpx 0.27.2", "marshmallow 3.21.3"],
}
