"""Validate the call-graph micro-benchmark cases (standard library only).

Usage: python3 benchmarks/callgraph/validate_cases.py [--no-run] [CASES_DIR]

Checks, for every case directory cases/<category>/<case>/:
  * main.py and callgraph.json exist; every .py file parses;
  * callgraph.json is an object of str -> sorted, duplicate-free list of str;
  * every callee is also a key, and no callee is a module;
  * the keys are exactly the definitions found in the case (modules, functions,
    methods, nested functions; lambdas and classes are not nodes);
  * `python3 main.py`, run inside the case directory, exits 0 (unless --no-run);
and that the expected categories exist with at least 4 cases each (64 in total).
Exits 1 if anything is wrong.
"""

import ast
import json
import os
import subprocess
import sys

CATEGORIES = {
    "assignments",
    "classes",
    "decorators",
    "dicts",
    "direct_calls",
    "functions",
    "generators",
    "imports",
    "kwargs",
    "lambdas",
    "lists",
    "mro",
    "returns",
    "super",
    "aliases",
    "relative_imports",
    "properties_and_attributes",
}
MIN_PER_CATEGORY = 4
MIN_TOTAL = 64


def module_name(case_dir, path):
    rel = os.path.relpath(path, case_dir)[: -len(".py")]
    parts = rel.split(os.sep)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def python_files(case_dir):
    for root, dirs, files in os.walk(case_dir):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                yield os.path.join(root, name)


def definitions(tree, prefix):
    """Yield qualified names of every def (nested in classes, functions or blocks)."""

    def walk(node, scope):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{scope}.{child.name}"
                yield name
                yield from walk(child, name)
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{scope}.{child.name}")
            else:
                yield from walk(child, scope)

    yield from walk(tree, prefix)


def check_case(case_dir, run):
    problems = []
    main_py = os.path.join(case_dir, "main.py")
    truth_path = os.path.join(case_dir, "callgraph.json")
    if not os.path.isfile(main_py):
        problems.append("missing main.py")
    if not os.path.isfile(truth_path):
        return problems + ["missing callgraph.json"]

    defined, modules = [], set()
    for path in python_files(case_dir):
        mod = module_name(case_dir, path)
        try:
            with open(path, encoding="utf-8") as handle:
                tree = ast.parse(handle.read(), filename=path)
        except SyntaxError as exc:
            problems.append(f"{os.path.relpath(path, case_dir)}: syntax error: {exc}")
            continue
        modules.add(mod)
        defined.append(mod)
        defined.extend(definitions(tree, mod))
    duplicates = sorted({name for name in defined if defined.count(name) > 1})
    if duplicates:
        problems.append(f"definitions with the same qualified name: {duplicates}")

    try:
        with open(truth_path, encoding="utf-8") as handle:
            truth = json.load(handle)
    except ValueError as exc:
        return problems + [f"callgraph.json does not parse: {exc}"]
    if not isinstance(truth, dict):
        return problems + ["callgraph.json is not a JSON object"]
    for caller, callees in truth.items():
        if not isinstance(callees, list) or not all(isinstance(c, str) for c in callees):
            problems.append(f"{caller}: value is not a list of strings")
            continue
        if callees != sorted(callees):
            problems.append(f"{caller}: callees not sorted")
        if len(set(callees)) != len(callees):
            problems.append(f"{caller}: duplicate callees")
        for callee in callees:
            if callee not in truth:
                problems.append(f"{caller} -> {callee}: callee is not a key")
            elif callee in modules:
                problems.append(f"{caller} -> {callee}: callee is a module")
    missing = sorted(set(defined) - set(truth))
    unknown = sorted(set(truth) - set(defined))
    if missing:
        problems.append(f"definitions missing from callgraph.json: {missing}")
    if unknown:
        problems.append(f"keys that are not definitions in the case: {unknown}")

    if run and os.path.isfile(main_py):
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        try:
            proc = subprocess.run(
                [sys.executable, "main.py"],
                cwd=case_dir,
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            if proc.returncode != 0:
                tail = proc.stderr.strip().splitlines()[-1:] or ["(no stderr)"]
                problems.append(f"main.py exited {proc.returncode}: {tail[0]}")
        except subprocess.TimeoutExpired:
            problems.append("main.py timed out")
    return problems


def main(argv):
    run = "--no-run" not in argv
    args = [a for a in argv if a != "--no-run"]
    cases_dir = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
    if not os.path.isdir(cases_dir):
        print(f"no cases directory: {cases_dir}")
        return 1

    failures = 0
    found = sorted(d for d in os.listdir(cases_dir) if os.path.isdir(os.path.join(cases_dir, d)))
    for name in sorted(set(found) - CATEGORIES):
        print(f"unexpected category directory: {name}")
        failures += 1
    total = 0
    for category in sorted(CATEGORIES):
        category_dir = os.path.join(cases_dir, category)
        cases = sorted(
            d
            for d in (os.listdir(category_dir) if os.path.isdir(category_dir) else [])
            if os.path.isdir(os.path.join(category_dir, d)) and d != "__pycache__"
        )
        if len(cases) < MIN_PER_CATEGORY:
            print(f"{category}: {len(cases)} cases, need at least {MIN_PER_CATEGORY}")
            failures += 1
        total += len(cases)
        for case in cases:
            for problem in check_case(os.path.join(category_dir, case), run):
                print(f"{category}/{case}: {problem}")
                failures += 1
    if total < MIN_TOTAL:
        print(f"{total} cases in total, need at least {MIN_TOTAL}")
        failures += 1
    print(f"{total} cases in {len(CATEGORIES)} categories: {'OK' if not failures else f'{failures} problem(s)'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
