"""Written by benchmarks/fit_ranker.py (``--write-model``); do not edit by hand.

The learned ranking (``fusion = "learned"``, cg/queries/search.py ``learned_score``): a pairwise
logistic regression's weight per feature (its intercept cancels in a pair); fitted on every question
set named in ``fitted_on``. Its figures in benchmarks/RESULTS.md come from leave-one-repository-out folds."""

from typing import Any

MODEL: dict[str, Any] = {
    "coef": {
        "lexical": 3.2284,
        "vector": 0.3385,
        "fused": 3.3482,
        "graph": 1.0414,
        "literal": 3.2619,
        "test": -6.9034,
        "example": -0.2491,
        "module": -1.3923,
        "container": -1.8853,
        "class": -5.6923,
        "other_side": -2.943,
        "callers": -0.3719,
        "linked": 0.6135,
        "between": -0.0083,
        "link_confidence": 0.5119,
    },
    "intercept": 0.0,
    "fitted_on": ["QUESTIONS", "cobra", "httpx", "jinja2", "marshmallow"],
}
