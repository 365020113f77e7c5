"""The call-graph benchmark's ground truth stays well-formed (keys are exactly each case's definitions,
callees are keys, lists sorted, every builtin or external call the source names is listed) and agrees
with a run-time trace of the programs, and the trace check does catch a wrong truth."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

CALLGRAPH = Path(__file__).resolve().parent.parent / "benchmarks" / "callgraph"
VALIDATE = CALLGRAPH / "validate_cases.py"
# one case per thing the tracer has to get right: wrappers, generators resumed by yield from, nested and
# module lambdas, C methods of stdlib instances, names that shadow builtins, callbacks from builtins, class
# bodies as callers (method decorators, class attribute initialisers, a class defined in a function)
TRACED = [
    "decorators/stacked_wrappers",
    "decorators/route_on_methods",
    "classes/class_body_calls",
    "dunders/generator_iter_method",
    "lambdas/nested_and_module_lambdas",
    "external/datetime_decimal_methods",
    "builtins/shadowed_builtins",
    "builtins/iter_sentinel_enumerate_zip",
]


def validate(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(VALIDATE), *args], capture_output=True, text=True, timeout=300)


def test_callgraph_cases_are_valid():
    result = validate("--no-run")
    assert result.returncode == 0, result.stdout + result.stderr
    found = re.search(r"(\d+) cases in 22 categories: OK", result.stdout)
    assert found and int(found.group(1)) >= 122, result.stdout


def test_traced_edges_agree_with_the_truth():
    result = validate(*(str(CALLGRAPH / "cases" / case) for case in TRACED))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(TRACED)} case(s): OK" in result.stdout


def test_the_trace_catches_a_wrong_truth(tmp_path):
    case = tmp_path / "stacked_wrappers"
    shutil.copytree(CALLGRAPH / "cases" / "decorators" / "stacked_wrappers", case)
    truth = json.loads((case / "callgraph.json").read_text())
    truth["main.audited.audit_wrapper"].remove("main.retried.retry_wrapper")  # a real edge left out
    truth["main"].remove("<builtin>.print")  # a builtin function call left out (traced and named)
    truth["main.retried.retry_wrapper"].remove("<builtin>.range")  # a type call left out (named, never traced)
    truth["main.process_refunds"] = sorted(["<builtin>.sum", "main.refund", *truth["main.process_refunds"]])
    (case / "callgraph.json").write_text(json.dumps(truth, indent=2))

    traced = validate(str(case)).stdout
    assert "traced but not in the truth: main.audited.audit_wrapper -> main.retried.retry_wrapper" in traced
    assert "traced but not in the truth: main -> <builtin>.print" in traced
    assert "the source names this call, the truth lacks it: main.retried.retry_wrapper -> <builtin>.range" in traced
    assert "in the truth but never traced: main.process_refunds -> main.refund" in traced
    assert "external edge neither traced nor named in the source: main.process_refunds -> <builtin>.sum" in traced
    assert "1 case(s): 6 problem(s)" in traced  # the print call is also missed by the source check

    static = validate("--no-run", str(case)).stdout
    assert "the source names this call, the truth lacks it: main.retried.retry_wrapper -> <builtin>.range" in static
    assert "the source names this call, the truth lacks it: main -> <builtin>.print" in static
    assert "1 case(s): 2 problem(s)" in static


def test_class_body_calls_belong_to_the_class(tmp_path):
    case = tmp_path / "route_on_methods"
    shutil.copytree(CALLGRAPH / "cases" / "decorators" / "route_on_methods", case)
    truth = json.loads((case / "callgraph.json").read_text())
    truth["main.WebhookViews"].remove("main.App.route")  # the old convention: the module runs the class body
    truth["main"] = sorted([*truth["main"], "main.App.route"])
    del truth["main.App"]  # a class whose body calls nothing is still a key
    truth["main"] = sorted([*truth["main"], "main.WebhookViews"])  # a class is never a callee
    (case / "callgraph.json").write_text(json.dumps(truth, indent=2))

    traced = validate(str(case)).stdout
    assert "traced but not in the truth: main.WebhookViews -> main.App.route" in traced
    assert "in the truth but never traced: main -> main.App.route" in traced
    assert "definitions missing from callgraph.json: ['main.App']" in traced
    assert "main -> main.WebhookViews: callee is a class" in traced
