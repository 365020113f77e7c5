"""Written by benchmarks/refusal.py (``--write-model``); do not edit by hand.

The logistic model behind explain's "Nothing in the index matches" (cg/queries/explain.py,
``answerability``, ``model_answers``): weights of its features, the intercept, the probability
below which explain refuses, and the cosine a question with unknown words needs
(``unknown_cosine``); fitted on every question set named in ``fitted_on``."""

from typing import Any

MODEL: dict[str, Any] = {
    "coef": {"cosine": 5.6603},
    "intercept": -1.5963,
    "threshold": 0.3896,
    "refuse_absent_names": True,
    "unknown_cosine": 0.2168,
    "fitted_on": ["Jinja2 3.1.4", "cobra v1.8.1 (Go)", "examples/shop", "httpx 0.27.2", "marshmallow 3.21.3"],
}
