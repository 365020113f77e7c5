"""Written by benchmarks/fit_ranker.py (``--write-model``); do not edit by hand.

The learned ranking (``fusion = "learned"``, cg/queries/search.py ``learned_score``): a pairwise
logistic regression's weight per feature (its intercept cancels in a pair); fitted on every question
set named in ``fitted_on``. Its figures in benchmarks/RESULTS.md come from leave-one-repository-out folds."""

from typing import Any

MODEL: dict[str, Any] = {
    "coef": {
        "lexical": 3.4973,
        "vector": 0.5619,
        "fused": 2.824,
        "graph": 1.0773,
        "literal": 3.1779,
        "test": -7.2921,
        "example": -0.2178,
        "module": -1.4562,
        "container": -2.042,
        "class": -5.7201,
        "other_side": -3.0735,
        "callers": -0.3511,
        "linked": 0.5143,
        "between": -0.1684,
        "link_confidence": 0.7106,
        "stub": -4.1555,
    },
    "intercept": 0.0,
    "fitted_on": ["QUESTIONS", "cobra", "httpx", "jinja2", "marshmallow"],
}
