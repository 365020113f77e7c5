"""Written by benchmarks/fit_ranker.py (``--write-model``); do not edit by hand.

The learned ranking (``fusion = "learned"``, cg/queries/search.py ``learned_score``): a pairwise
logistic regression's weight per feature (its intercept cancels in a pair); fitted on every question
set named in ``fitted_on``. Its figures in benchmarks/RESULTS.md come from leave-one-repository-out folds."""

from typing import Any

MODEL: dict[str, Any] = {
    "coef": {
        "lexical": 3.2287,
        "vector": 0.9317,
        "fused": 2.2535,
        "graph": 0.7863,
        "literal": 3.69,
        "test": -7.2867,
        "example": -1.1279,
        "module": -1.409,
        "container": -2.2292,
        "class": -5.7346,
        "other_side": -3.7751,
        "callers": -0.384,
        "linked": 0.7217,
        "between": 0.0894,
        "link_confidence": 0.9841,
    },
    "intercept": 0.0,
    "fitted_on": ["QUESTIONS", "cobra", "httpx", "jinja2", "marshmallow"],
}
