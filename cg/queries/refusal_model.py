"""Written by benchmarks/refusal.py (``--write-model``); do not edit by hand.

The logistic model behind explain's "Nothing in the index matches" (cg/queries/explain.py,
``answerability``): weights of its three features, the intercept, and the probability below which
explain refuses. Placeholder until the script has been run: accept every question.
"""

MODEL = {"coef": {"coverage": 0.0, "missing": 0.0, "cosine": 0.0}, "intercept": 10.0, "threshold": 0.5, "fitted_on": []}
