"""Written by benchmarks/fit_ranker.py (``--write-model``); do not edit by hand.

The learned ranking (``fusion = "learned"``, cg/queries/search.py ``learned_score``): a logistic
regression's weight per feature and its intercept; fitted on every question set named in
``fitted_on``. Its figures in benchmarks/RESULTS.md come from leave-one-repository-out folds."""

from typing import Any

MODEL: dict[str, Any] = {
    "coef": {
        "lexical": 4.3939,
        "vector": 2.1784,
        "graph": 1.1942,
        "literal": 4.2112,
        "test": -8.623,
        "example": -1.3641,
        "module": -2.0688,
        "container": -3.0498,
        "class": -5.1071,
        "other_side": -3.8047,
        "callers": -0.3662,
        "linked": 0.8418,
        "between": 0.0976,
        "link_confidence": 0.8061,
    },
    "intercept": 0.0,
    "fitted_on": ["QUESTIONS", "cobra", "httpx", "jinja2", "marshmallow"],
}
