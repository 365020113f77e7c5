"""Written by benchmarks/fit_ranker.py (``--write-model``); do not edit by hand.

The learned ranking (``fusion = "learned"``, cg/queries/search.py ``learned_score``): a pairwise
logistic regression's weight per feature (its intercept cancels in a pair); fitted on every question
set named in ``fitted_on``. Its figures in benchmarks/RESULTS.md come from leave-one-repository-out folds."""

from typing import Any

MODEL: dict[str, Any] = {
    "coef": {
        "lexical": 3.5151,
        "vector": 0.5494,
        "fused": 2.8316,
        "graph": 1.087,
        "literal": 3.1849,
        "test": -7.2928,
        "example": -0.2285,
        "module": -1.455,
        "container": -2.0432,
        "class": -5.7409,
        "other_side": -3.0838,
        "callers": -0.3514,
        "linked": 0.5106,
        "between": -0.1491,
        "link_confidence": 0.7121,
        "stub": -4.1618,
    },
    "intercept": 0.0,
    "fitted_on": ["QUESTIONS", "cobra", "httpx", "jinja2", "marshmallow"],
}
