"""Executed-edge recall and audited precision: which of the calls a project's own test suite really
makes does cg's call graph hold, and how many of the edges it holds are right? Ground truth nobody
here wrote: the edges come from running the tests under a tracer; the precision sample is read by hand.

Projects (pinned PyPI sdists, tests included; none of them was used to tune cg): flask (a web
framework), sqlparse (a parser) and more-itertools (a data/iteration library). For each, a
virtualenv of its own gets pytest and the project's dependencies from the package index, and the
suite runs with the sdist's source tree first on the path, under benchmarks/tracer.py (a pytest
plugin over ``sys.monitoring`` on 3.12+, ``sys.setprofile`` before; its docstring defines an edge).
An executed edge is a caller -> callee pair where both are definitions of the package itself (tests
and libraries are left out); names follow `cg callgraph`'s convention.

In the same run, over the same trees:
- cg: the call graph `cg callgraph --no-external` builds, made in this process (to time the resolve
  step and keep each edge's line), with the jedi resolver (cg's default) and the name resolver alone;
  jedi's seconds per 1,000 lines of code, with the machine's load average around it.
- PyCG 0.0.7 and pyan3 2.9.0, the published anchors, each in a venv of its own under
  benchmarks/data, with a time limit per tool per project; a tool that fails or times out is
  reported as such. Their edges are read in the same naming (both name modules by path from the
  package's import root) and scored on the same executed edges.
- The misses (executed edges cg's jedi graph lacks), classified by the call site that made them (the
  callee's kind, then the call written at the caller's line); benchmarks/data/misses-<project>.json
  lists every one with its class and lines, to check a resolver change against.
- Precision: a fixed sample of 100 in-package jedi edges per project, each read by hand; the verdicts
  live in benchmarks/audit/<project>.tsv. An edge is sampled by the rank of a hash of its names, so a
  resolver change only swaps in the edges it adds; sampled edges nobody reviewed yet are counted and
  listed (benchmarks/data/audit-pending/<project>.tsv holds them with their source lines to review),
  never counted as correct.

    python benchmarks/executed_edges.py [--only flask] [--python python3.12]   # --only prints, writes nothing
"""

from __future__ import annotations

import argparse
import ast
import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from ingest import DATA, fetch_sdist  # noqa: E402
from results import machine_line, write_section  # noqa: E402

from cg.config import load_settings  # noqa: E402
from cg.ingest.pipeline import IndexSummary, extract_repository, resolve_extractions  # noqa: E402
from cg.model import ResolvedBy  # noqa: E402

AUDIT = HERE / "audit"
AUDIT_SEED = "cg-issue-15"
AUDIT_SIZE = 100
TOOL_SECONDS = 300  # per tool per project
# PyCG's own --max-iter: its default fix-point iteration did not end within 300 s on flask or on
# more-itertools here (2026-12-01); each pass over flask takes ~12 s on this machine.
PYCG_ITERATIONS = 3
# jedi's per-file budget (cg's default is 30 s): on a shared, loaded machine a large file such as
# more_itertools/more.py can pass 30 s and fall back to names, which would make recall depend on load.
JEDI_BUDGET = 300.0
VERDICTS = ("correct", "wrong", "unclear")
Edge = tuple[str, str]


@dataclass(frozen=True)
class Project:
    name: str
    version: str
    kind: str
    package: str  # the top-level import name
    source: str  # the directory of the sdist the package is imported from ("" = its root)
    tests: str  # what pytest is given
    requirements: tuple[str, ...] = ("pytest",)  # what its tests need beyond its own dependencies

    def root(self, tree: Path) -> Path:
        return tree / self.source if self.source else tree


PROJECTS = [
    # flask's own pinned test requirements, and the werkzeug of its release (3.1 changed what its tests assert)
    Project(
        "flask", "3.0.3", "web framework", "flask", "src", "tests", ("-r", "requirements/tests.txt", "werkzeug==3.0.3")
    ),
    Project("sqlparse", "0.5.1", "parser", "sqlparse", "", "tests"),
    Project("more-itertools", "10.5.0", "data / iteration library", "more_itertools", "", "tests"),
]


@dataclass(frozen=True)
class Tool:
    """A published call-graph tool run as the anchor, pinned, in a venv of its own."""

    name: str
    requirement: str
    note: str


TOOLS = [
    # 0.0.7: the last release whose wheel installs the `pycg` package its own imports name (0.0.8's ships `PyCG`)
    Tool("PyCG", "pycg==0.0.7", "`python -m pycg --package ROOT FILES`, its JSON adjacency map"),
    Tool("pyan3", "pyan3==2.9.0", "its analyzer's uses edges to callables (benchmarks/pyan_edges.py)"),
]


@dataclass
class CgRun:
    edges: dict[Edge, set[int]]  # in-package caller -> callee, with the call lines
    seconds: float  # the resolve step
    loc: int
    load_before: float
    load_after: float
    symbols: dict[str, tuple[str, int, int, str]]  # qualname -> (path, start, end, kind)
    over_budget: int = 0  # files whose jedi budget ran out (their remaining sites fell back to names)


@dataclass
class ToolRun:
    edges: set[Edge] = field(default_factory=set)
    seconds: float = 0.0
    status: str = "ok"


def in_package(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def python_env(tag: str, requirements: list[str], cwd: Path | None, python: str) -> Path:
    """A virtualenv under benchmarks/data with ``requirements`` installed (made once)."""
    venv = DATA / tag
    exe = venv / "bin" / "python"
    done = venv / "cg-installed"  # written last: a venv whose install was cut off is made again
    if not done.exists():
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(exe), "-m", "pip", "install", "--quiet", *requirements], cwd=cwd, check=True)
        done.write_text(" ".join(requirements) + "\n")
    return exe


def test_env(project: Project, tree: Path, python: str) -> Path:
    """A virtualenv with pytest and the project's own dependencies."""
    version = subprocess.run(
        [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True, text=True
    ).stdout.strip()
    suffix = "" if python == sys.executable else f"-py{version}"
    return python_env(f"venv-{project.name}-{project.version}{suffix}", [*project.requirements, "."], tree, python)


def tool_env(tool: Tool) -> Path:
    exe = python_env(f"venv-{tool.name.lower()}", [tool.requirement], None, sys.executable)
    # PyCG's sdist installs its call-graph micro-benchmark as top-level data; it is held-out ground
    # truth for cg, so it is removed unread.
    for site in (exe.parent.parent / "lib").glob("python*/site-packages"):
        for extra in site.glob("micro-benchmark*"):
            shutil.rmtree(extra)
    return exe


def executed(project: Project, tree: Path, python: str) -> tuple[dict[Edge, set[int]], dict]:
    """The package-internal edges its test suite executes (with the caller's lines), and how the run went."""
    exe = test_env(project, tree, python)
    root = project.root(tree)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "edges.json"
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(root), str(HERE)]),
            "CG_TRACE_ROOT": str(root),
            "CG_TRACE_PACKAGE": project.package,
            "CG_TRACE_OUT": str(out),
        }
        started = time.perf_counter()
        run = subprocess.run(
            [str(exe), "-m", "pytest", "-q", "-p", "tracer", "-p", "no:cacheprovider", project.tests],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - started
        if not out.exists():
            raise SystemExit(
                f"{project.name}: the traced test run wrote nothing\n{run.stdout[-2000:]}{run.stderr[-2000:]}"
            )
        data = json.loads(out.read_text())
    tail = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""
    edges = {
        (a, b): set(lines)
        for a, b, lines in data["edges"]
        if in_package(a, project.package) and in_package(b, project.package)
    }
    legacy = {
        (a, b) for a, b in data["legacy_edges"] if in_package(a, project.package) and in_package(b, project.package)
    }
    return edges, {
        "tracer": data["tracer"],
        "seconds": seconds,
        "pytest": tail,
        "comprehensions": data["comprehension_starts"],
        "nested": set(data["nested"]),
        "legacy": legacy,
        # 3.12+: generator edges where the generator function is called; where its body ran, apart
        "generators": data.get("generators", "first started"),
        "resumed": {(a, b) for a, b in data.get("resumed", []) if in_package(a, project.package)},
        "lazy": set(data.get("lazy", [])),
        # test node id -> the package's definitions that started while it ran (benchmarks/impact_tests.py)
        "reached": {test: set(names) for test, names in data.get("reached", {}).items()},
    }


def cg_graph(tree: Path, package: str, resolver: str) -> CgRun:
    """`cg callgraph --no-external`'s in-package edges (build_callgraph's rules), keeping each edge's lines."""
    settings = load_settings(tree, resolver=resolver, jedi_budget=JEDI_BUDGET)
    summary = IndexSummary(repo=str(tree), backend="none")
    extractions, _ = extract_repository(settings, summary=summary)
    extractions = [ex for ex in extractions if ex.file.kind != "config"]
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    resolved, _ = resolve_extractions(settings, extractions, summary=summary)
    seconds = time.perf_counter() - started
    load_after = os.getloadavg()[0]
    symbols = {sym.id: sym for ex in extractions for sym in ex.symbols}
    edges: dict[Edge, set[int]] = {}
    for edge in resolved:
        if edge.type != "CALLS" or edge.dst_label != "Symbol" or not ResolvedBy(edge.resolved_by).resolved:
            continue
        caller, target = symbols[edge.src], symbols[edge.dst]
        if target.kind == "class":
            continue  # the constructor edge (if any) stands for the instantiation
        if in_package(caller.qualname, package) and in_package(target.qualname, package):
            edges.setdefault((caller.qualname, target.qualname), set()).add(edge.line)
    return CgRun(
        edges=edges,
        seconds=seconds,
        loc=sum(ex.file.loc for ex in extractions if ex.file.language == "python"),
        load_before=load_before,
        load_after=load_after,
        symbols={s.qualname: (s.path, s.start_line, s.end_line, s.kind) for s in symbols.values()},
        over_budget=len(summary.jedi_timed_out),
    )


def package_files(project: Project, tree: Path) -> list[str]:
    root = project.root(tree)
    return sorted(str(p.relative_to(root)) for p in (root / project.package).rglob("*.py"))


def run_tool(tool: Tool, project: Project, tree: Path, pycg_iterations: int) -> ToolRun:
    """The tool's in-package edges, or why there are none (failed / timed out), within TOOL_SECONDS."""
    try:
        exe = tool_env(tool)
    except subprocess.CalledProcessError as exc:
        return ToolRun(status=f"install failed ({exc.returncode})")
    root = project.root(tree)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "edges.json"
        files = package_files(project, tree)
        if tool.name == "PyCG":
            command = [str(exe), "-m", "pycg", "--package", ".", *files, "-o", str(out)]
            command += ["--max-iter", str(pycg_iterations)] if pycg_iterations else []
        else:
            command = [str(exe), str(HERE / "pyan_edges.py"), ".", str(out), *files]
        started = time.perf_counter()
        try:
            run = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=TOOL_SECONDS)
        except subprocess.TimeoutExpired:
            return ToolRun(seconds=TOOL_SECONDS, status=f"timed out after {TOOL_SECONDS} s")
        seconds = time.perf_counter() - started
        if run.returncode != 0 or not out.exists():
            last = (run.stderr.strip().splitlines() or ["no output"])[-1][:120]
            return ToolRun(seconds=seconds, status=f"failed: {last}")
        data = json.loads(out.read_text())
    pairs = (
        [(a, b) for a, callees in data.items() for b in callees] if isinstance(data, dict) else [tuple(e) for e in data]
    )
    edges = {(a, b) for a, b in pairs if in_package(a, project.package) and in_package(b, project.package)}
    return ToolRun(edges=edges, seconds=seconds)


# ---------------------------------------------------------------------------------------------
# pyright beside jedi (issue 20): scip-python's answers at cg's own call sites.

SCIP_PYTHON = HERE.parent / "tools" / "npm" / "node_modules" / ".bin" / "scip-python"


def pyright_graph(project: Project, tree: Path) -> ToolRun:
    """In-package edges when pyright (through Sourcegraph's scip-python, tools/npm) answers cg's call
    sites instead of jedi: each call's last name is looked up among the index's references, followed to
    its definition, and mapped to cg's definition there (a class to its own ``__init__``, as cg_graph
    counts instantiation). Decorator applications count as cg counts them. scip-python gets an empty
    environment file, so it never runs pip to list installed packages."""
    from cg.ingest.resolve.scip import Indexer, read_index, run_indexer, typescript_external
    from cg.ingest.resolve.scip_schema import UTF16

    if not SCIP_PYTHON.exists():
        return ToolRun(status="not installed (npm ci --prefix tools/npm)")
    settings = load_settings(tree, resolver="name")
    extractions, _ = extract_repository(settings)
    python = [ex for ex in extractions if ex.file.language == "python"]
    with tempfile.TemporaryDirectory() as tmp:
        environment = Path(tmp) / "environment.json"
        environment.write_text("[]")
        output = Path(tmp) / "index.scip"
        argv = ["node", str(SCIP_PYTHON), "index", "--cwd", str(tree), "--output", str(output)]
        argv += ["--project-version", "0", "--environment", str(environment), "--quiet"]
        started = time.perf_counter()
        data, why = run_indexer("scip-python", argv, Path(tmp), dict(os.environ), TOOL_SECONDS, output)
        seconds = time.perf_counter() - started
    if data is None:
        return ToolRun(seconds=seconds, status=why)
    indexer = Indexer("scip-python", ("python",), "", "", UTF16, lambda *a: (None, ""), typescript_external)
    wanted = {ex.file.path for ex in python}
    answers = read_index(data, wanted, lambda rel: (tree / rel).read_bytes(), indexer)
    at_line: dict[tuple[str, int], list] = {}
    symbols = {}
    init: dict[str, str] = {}
    for ex in python:
        for sym in ex.symbols:
            symbols[sym.id] = sym
            at_line.setdefault((sym.path, sym.def_line), []).append(sym)
            if sym.name == "__init__":
                init[sym.parent_id] = sym.qualname
    edges: set[Edge] = set()
    for ex in python:
        for call in ex.calls:
            caller = symbols.get(call.caller_id)
            if caller is None or call.via not in ("call", "new", "decorator"):
                continue
            for answer in answers.get(ex.file.path, {}).get((call.line, call.column), ()):
                name = answer.name or call.callee.rsplit(".", 1)[-1]
                for target in at_line.get((answer.path, answer.line), ()):
                    if target.name != name:
                        continue
                    callee = init.get(target.id) if target.kind == "class" else target.qualname
                    if callee and in_package(caller.qualname, project.package) and in_package(callee, project.package):
                        edges.add((caller.qualname, callee))
    return ToolRun(edges=edges, seconds=seconds)


# ---------------------------------------------------------------------------------------------
# Why an executed edge is missed: read the call site the tracer saw.


class Sources:
    """Parsed files of one tree, by module name, for reading call sites."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cache: dict[str, tuple[list[str], ast.Module | None]] = {}

    def module_path(self, module: str) -> Path | None:
        base = self.root.joinpath(*module.split("."))
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
        return None

    def split(self, name: str) -> tuple[str, list[str]] | None:
        """(module, qualname parts) of a dotted definition name."""
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):
            if self.module_path(".".join(parts[:cut])):
                return ".".join(parts[:cut]), parts[cut:]
        return None

    def parsed(self, module: str) -> tuple[list[str], ast.Module | None]:
        if module not in self.cache:
            path = self.module_path(module)
            text = path.read_text(encoding="utf-8") if path else ""
            try:
                tree: ast.Module | None = ast.parse(text)
            except SyntaxError:
                tree = None
            self.cache[module] = (text.splitlines(), tree)
        return self.cache[module]

    def definition(self, name: str) -> ast.AST | None:
        """The def/class node of a dotted name (lambdas and unknown names: None)."""
        split = self.split(name)
        if split is None:
            return None
        module, parts = split
        node: ast.AST | None = self.parsed(module)[1]
        for part in parts:
            if node is None:
                return None
            node = next(
                (
                    n
                    for n in ast.walk(node)
                    if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n.name == part
                ),
                None,
            )
        return node

    def calls_at(self, caller: str, line: int) -> tuple[list[ast.Call], ast.AST | None]:
        """The calls written on ``line`` of the caller's module, and the caller's own def node."""
        split = self.split(caller)
        if split is None:
            return [], None
        tree = self.parsed(split[0])[1]
        if tree is None:
            return [], None
        calls = [
            n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno <= line <= (n.end_lineno or n.lineno)
        ]
        calls.sort(key=lambda n: (n.end_lineno or n.lineno) - n.lineno)  # the tightest first
        return calls, self.definition(caller)


def _params(node: ast.AST | None) -> dict[str, bool]:
    """Parameter name -> annotated?"""
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return {}
    a = node.args
    every = [*a.posonlyargs, *a.args, *a.kwonlyargs, *([a.vararg] if a.vararg else []), *([a.kwarg] if a.kwarg else [])]
    return {p.arg: p.annotation is not None for p in every}


def _base_name(expr: ast.AST) -> str | None:
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def _decorator_lines(node: ast.AST | None) -> set[int]:
    if node is None:
        return set()
    return {
        line
        for n in ast.walk(node)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        for d in n.decorator_list
        for line in range(d.lineno, (d.end_lineno or d.lineno) + 1)
    }


_DUNDERS = {
    "__init__": "constructor (__init__ from X())",
    "__new__": "constructor (__init__ from X())",
    "__post_init__": "constructor (__init__ from X())",
    "__init_subclass__": "constructor (__init__ from X())",
    "__iter__": "iteration (__iter__/__next__)",
    "__next__": "iteration (__iter__/__next__)",
    "__enter__": "with (__enter__/__exit__)",
    "__exit__": "with (__enter__/__exit__)",
    "__call__": "instance call (__call__)",
}
_PROPERTY = {"property", "cached_property", "setter", "getter", "deleter", "locked_cached_property"}


def classify(
    edge: Edge, lines: set[int], sources: Sources, nested: set[str], resolved: dict[str, set[str]] | None = None
) -> str:
    """Why cg may have missed this executed edge, from the callee's kind, what cg made of the caller
    (``resolved``: caller -> callees in cg's graph) and the call written at the caller's line."""
    caller, callee = edge
    last = callee.rsplit(".", 1)[-1]
    if last.startswith("<lambda"):
        return "lambda"
    if last in _DUNDERS:
        return _DUNDERS[last]
    if last.startswith("__") and last.endswith("__"):
        return "other dunder (operator, item or attribute access)"
    target = sources.definition(callee)
    if isinstance(target, ast.FunctionDef | ast.AsyncFunctionDef):
        decorators = {
            (_base_name(d) or "") if not isinstance(d, ast.Attribute) else d.attr for d in target.decorator_list
        }
        if decorators & _PROPERTY:
            return "property access"
    if _is_generator(target) and not any(
        _called_name(call) == last for line in lines for call in sources.calls_at(caller, line)[0]
    ):
        return "generator started where it is iterated, not where it is called"
    if any(c != callee and c.rsplit(".", 1)[-1] == last for c in (resolved or {}).get(caller, ())):
        return "cg chose another definition of that name (the override or sibling that ran is missing)"
    outer = caller.split(".")
    enclosing = {p for cut in range(1, len(outer)) for p in _params(sources.definition(".".join(outer[:cut])))}
    best = None
    for line in sorted(lines):
        calls, caller_node = sources.calls_at(caller, line)
        split = sources.split(caller)
        if split and line in _decorator_lines(sources.parsed(split[0])[1]):
            return "decorator (applied by the defining scope)"
        if not calls:
            continue
        kind = _call_kind(calls, last, caller_node, enclosing)
        if kind:
            return kind
        best = best or "the call names something else (an alias, an attribute holding the function)"
    if callee in nested:
        return "closure or decorator wrapper"
    return best or "no call written at the line (implicit or through a library)"


def _is_generator(node: ast.AST | None) -> bool:
    """Whether a def's own body yields (a call makes a generator; its code starts where it is iterated)."""
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    stack: list[ast.AST] = list(node.body)
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Yield | ast.YieldFrom):
            return True
        if not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            stack.extend(ast.iter_child_nodes(n))
    return False


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _assigned(node: ast.AST | None) -> dict[str, ast.AST | None]:
    """Names the caller binds itself -> the value of the last plain assignment (None: a loop or with target)."""
    bound: dict[str, ast.AST | None] = {}
    if node is None:
        return bound
    for n in ast.walk(node):
        if isinstance(n, ast.Assign):
            for target in n.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        bound[name.id] = n.value if isinstance(target, ast.Name) else None
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            bound.setdefault(n.id, None)
    return bound


def _is_getattr(expr: ast.AST | None) -> bool:
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "getattr"


def _call_kind(calls: list[ast.Call], last: str, caller: ast.AST | None, enclosing: set[str]) -> str | None:
    params = _params(caller)
    bound = _assigned(caller) if isinstance(caller, ast.FunctionDef | ast.AsyncFunctionDef) else {}
    for call in calls:
        func = call.func
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            name = arg.attr if isinstance(arg, ast.Attribute) else arg.id if isinstance(arg, ast.Name) else None
            if name == last:
                return "function passed as argument (called by the callee or a library)"
        if _is_getattr(func):
            return "getattr"
        if isinstance(func, ast.Attribute) and func.attr == last:
            base = func.value
            if isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and base.func.id == "super":
                return "super()"
            if isinstance(base, ast.Name):
                if base.id in ("self", "cls"):
                    return "self.method() (override, mixin or attribute)"
                if base.id in params:
                    return "method on an annotated parameter" if params[base.id] else "method on an untyped parameter"
                if base.id in bound:
                    return "method on a local variable"
                return "method on a module-level name (global, import, class)"
            if isinstance(base, ast.Attribute) and _base_name(base) in ("self", "cls"):
                return "method on a self attribute"
            return "method on an expression (call result, subscript)"
        if isinstance(func, ast.Name):
            if func.id in params:
                return "function passed as argument (called through a parameter)"
            if func.id in bound:
                value = bound[func.id]
                return "getattr" if _is_getattr(value) else "function held in a local variable"
            if func.id == last:
                return "plain name call"
            if func.id in enclosing:
                return "closure calling an enclosing function's parameter (a wrapper calling the original)"
        if isinstance(func, ast.Subscript):
            return "call through a container item (dict, list)"
        if isinstance(func, ast.Call):
            return "call of a call's result (a factory or wrapper: f(x)(...))"
    return None


# ---------------------------------------------------------------------------------------------
# The precision audit.


def audit_rank(edge: Edge) -> str:
    return hashlib.sha256(f"{AUDIT_SEED}\0{edge[0]}\0{edge[1]}".encode()).hexdigest()


def load_verdicts(project: Project) -> dict[Edge, tuple[str, str]]:
    path = AUDIT / f"{project.name}.tsv"
    if not path.exists():
        return {}
    verdicts = {}
    with path.open(newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["verdict"] not in VERDICTS:
                raise SystemExit(f"{path}: unknown verdict {row['verdict']!r} for {row['caller']} -> {row['callee']}")
            verdicts[(row["caller"], row["callee"])] = (row["verdict"], row["reason"])
    return verdicts


def audit(project: Project, tree: Path, graph: CgRun, sources: Sources) -> dict:
    """Precision over the reviewed part of the sample; the unreviewed part is listed for review."""
    sample = sorted(graph.edges, key=audit_rank)[:AUDIT_SIZE]
    verdicts = load_verdicts(project)
    counts = dict.fromkeys(VERDICTS, 0)
    pending = []
    for edge in sample:
        if edge in verdicts:
            counts[verdicts[edge][0]] += 1
        else:
            pending.append(edge)
    pending_file = DATA / "audit-pending" / f"{project.name}.tsv"
    pending_file.parent.mkdir(parents=True, exist_ok=True)
    with pending_file.open("w") as f:
        f.write("caller\tcallee\tline\tverdict\treason\tsource\n")
        for edge in pending:
            line = min(graph.edges[edge])
            split = sources.split(edge[0])
            text = sources.parsed(split[0])[0][line - 1].strip() if split and line else ""
            f.write(f"{edge[0]}\t{edge[1]}\t{line}\t\t\t{text}\n")
    judged = counts["correct"] + counts["wrong"]
    return {
        "sample": len(sample),
        **counts,
        "pending": pending,
        "precision": counts["correct"] / judged if judged else None,
        "wrong_edges": [(e, verdicts[e][1]) for e in sample if e in verdicts and verdicts[e][0] == "wrong"],
    }


def recall(found: set[Edge], truth: set[Edge]) -> str:
    return f"{len(found & truth) / len(truth):.3f}" if truth else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="one project by name; prints, writes nothing")
    parser.add_argument(
        "--python",
        help="the interpreter the test suites run on (default: pyenv's or the PATH's 3.12+, for sys.monitoring's "
        "CALL events, which place a generator's edge at its call; else this one)",
    )
    parser.add_argument(
        "--check-python", help="the interpreter of the other tracer, to trace sqlparse again (default: this one)"
    )
    parser.add_argument(
        "--pycg-iterations", type=int, default=PYCG_ITERATIONS, help="PyCG's --max-iter (0: its fix-point)"
    )
    args = parser.parse_args()
    args.python = args.python or newer_python(None) or sys.executable
    projects = [p for p in PROJECTS if not args.only or p.name == args.only]
    started = time.perf_counter()

    results = []
    for project in projects:
        tree = fetch_sdist(project.name, project.version)
        traced, run = executed(project, tree, args.python)
        truth = set(traced)
        graphs = {resolver: cg_graph(tree, project.package, resolver) for resolver in ("jedi", "name")}
        tools = {tool.name: run_tool(tool, project, tree, args.pycg_iterations) for tool in TOOLS}
        tools["pyright"] = pyright_graph(project, tree)
        sources = Sources(project.root(tree))
        jedi = graphs["jedi"]
        misses: dict[str, list[Edge]] = {}
        resolved: dict[str, set[str]] = {}
        for caller, callee in jedi.edges:
            resolved.setdefault(caller, set()).add(callee)
        for edge in sorted(truth - set(jedi.edges)):
            kind = classify(edge, traced[edge], sources, run["nested"], resolved)
            misses.setdefault(kind, []).append(edge)
        checked = audit(project, tree, jedi, sources)
        (DATA / f"misses-{project.name}.json").write_text(
            json.dumps({kind: [[a, b, sorted(traced[(a, b)])] for a, b in edges] for kind, edges in misses.items()})
        )
        results.append((project, run, truth, graphs, tools, misses, checked))
        tool_text = "; ".join(
            f"{name} {recall(t.edges, truth) if t.status == 'ok' else t.status}" for name, t in tools.items()
        )
        print(
            f"{project.name}: {len(truth)} executed edges ({run['tracer']}); jedi recall "
            f"{recall(set(jedi.edges), truth)}; name {recall(set(graphs['name'].edges), truth)}; {tool_text}; "
            f"audit {checked['correct']} correct / {checked['wrong']} wrong / {checked['unclear']} unclear, "
            f"{len(checked['pending'])} unreviewed; {run['pytest']}",
            flush=True,
        )
    cross = cross_check(results, args.check_python or sys.executable)
    lines = report(results, time.perf_counter() - started, args.pycg_iterations) + cross
    if args.only:
        print("\n".join(lines))
    else:
        write_section("Executed-edge recall (benchmarks/executed_edges.py)", "\n".join(lines))


def newer_python(given: str | None) -> str | None:
    """A Python 3.12+ to run the sys.monitoring tracer on: the one given, else pyenv's or the PATH's 3.12."""
    candidates = [given] if given else []
    if not given and shutil.which("pyenv"):
        versions = subprocess.run(["pyenv", "versions", "--bare"], capture_output=True, text=True).stdout.split()
        for version in sorted(v for v in versions if v.startswith("3.12.")):
            prefix = subprocess.run(["pyenv", "prefix", version], capture_output=True, text=True).stdout.strip()
            candidates.append(str(Path(prefix) / "bin" / "python") if prefix else "")
    candidates += [] if given else ["python3.12", "python3.13"]
    for candidate in filter(None, candidates):
        probe = subprocess.run(
            [candidate, "-c", "import sys; print(sys.version_info >= (3, 12))"], capture_output=True, text=True
        )
        if probe.returncode == 0 and probe.stdout.strip() == "True":
            return candidate
    return None


def cross_check(results: list, other_python: str) -> list[str]:
    """The same suite traced by the other tracer: the edge definition must not depend on which one ran,
    except for generators, which ``sys.setprofile`` can only place where their body first runs."""
    ran = {project.name: (project, run, truth) for project, run, truth, *_ in results}
    if "sqlparse" not in ran:
        return []
    project, run, truth = ran["sqlparse"]
    primary = run["tracer"]
    wanted = "sys.setprofile" if primary == "sys.monitoring" else "sys.monitoring"
    python = other_python if wanted == "sys.setprofile" else newer_python(None)
    title = f"Tracer cross-check: sqlparse's suite traced again with `{wanted}`"
    if python is None:
        return ["", f"{title}: not run (no Python 3.12+ found)."]
    other, other_run = executed(project, fetch_sdist(project.name, project.version), python)
    if other_run["tracer"] != wanted:
        return ["", f"{title}: not run ({python} traces with `{other_run['tracer']}` too)."]
    lazy = run["lazy"] | other_run["lazy"]
    mine = {e for e in truth if e[1] not in lazy}
    theirs = {e for e in other if e[1] not in lazy}
    version = subprocess.run([python, "--version"], capture_output=True, text=True).stdout.strip()
    both, only_other, only_primary = mine & theirs, theirs - mine, mine - theirs
    lines = [
        "",
        f"{title} ({version}, {other_run['pytest']}), edges into generator and coroutine functions left "
        f"out ({len(lazy)} such functions ran): {len(theirs)} edges, {len(both)} of them also in the "
        f"`{primary}` run's {len(mine)}; only with `{wanted}`: {len(only_other)}; only with `{primary}`: "
        f"{len(only_primary)}.",
    ]
    lines += [f"- only `{wanted}`: `{a}` -> `{b}`" for a, b in sorted(only_other)[:10]]
    lines += [f"- only `{primary}`: `{a}` -> `{b}`" for a, b in sorted(only_primary)[:10]]
    return lines


def run_where(found: set[Edge], truth: set[Edge], run: dict) -> str:
    """Recall on the truth with generators' edges from the frames that ran their bodies instead."""
    if run["generators"] != "called":
        return "(the same)"
    where = {e for e in truth if e[1] not in run["lazy"]} | run["resumed"]
    return f"{recall(found, where)} of {len(where)}"


def report(results: list, total_seconds: float, pycg_iterations: int) -> list[str]:
    lines = [
        machine_line(),
        f"Whole run {total_seconds:.0f} s.",
        "",
        "Each project's own test suite runs under a call tracer (benchmarks/tracer.py: `sys.monitoring` on",
        "3.12+, `sys.setprofile` before); an executed edge is a call from one definition of the package to",
        "another, named by `cg callgraph`'s conventions (a decorator is called by the scope defining the",
        "decorated function; lambdas are `<scope>.<lambdaN>` definitions; comprehensions belong to the",
        "definition around them). Recall = executed edges a tool's graph also has. cg: `cg callgraph",
        "--no-external`'s edges with the jedi resolver (default) and the name resolver alone (baseline).",
        f"PyCG and pyan3: the published tools, pinned ({', '.join(t.requirement for t in TOOLS)}), on the",
        f"package's own files, at most {TOOL_SECONDS} s each; PyCG "
        + (f"with `--max-iter {pycg_iterations}`" if pycg_iterations else "to its fix-point")
        + " (its fix-point did not end within 300 s on flask or more-itertools). Edges = in-package edges.",
        "`earlier convention` = jedi's recall on the edges as the first version of this benchmark named",
        "them (lambdas folded into the definition around them, calls into them not counted).",
        "A generator (or coroutine) function's edge comes from where it is called (rule 7 of",
        "benchmarks/callgraph/README.md; `sys.monitoring`'s CALL events, 3.12+); `generators where run` =",
        "jedi's recall when instead the frame that first ran the generator's body is its caller (what",
        "`sys.setprofile` sees, and this benchmark's truth before this column).",
        "",
        "| project | kind | tests (pytest's last line) | tracer | traced run s | executed edges "
        "| cg jedi recall | cg jedi edges | cg name recall | cg name edges | PyCG recall | PyCG edges | PyCG s "
        "| pyan3 recall | pyan3 edges | pyan3 s | jedi recall, earlier convention "
        "| jedi recall, generators where run |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for project, run, truth, graphs, tools, _, _ in results:
        jedi, name = graphs["jedi"], graphs["name"]
        cells = []
        for tool in TOOLS:
            t = tools[tool.name]
            if t.status == "ok":
                cells += [recall(t.edges, truth), str(len(t.edges)), f"{t.seconds:.0f}"]
            else:
                cells += [t.status, "-", f"{t.seconds:.0f}"]
        lines.append(
            f"| {project.name} {project.version} | {project.kind} | {run['pytest']} | {run['tracer']} "
            f"| {run['seconds']:.0f} | {len(truth)} | {recall(set(jedi.edges), truth)} | {len(jedi.edges)} "
            f"| {recall(set(name.edges), truth)} | {len(name.edges)} | {' | '.join(cells)} "
            f"| {recall(set(jedi.edges), run['legacy'])} of {len(run['legacy'])} "
            f"| {run_where(set(jedi.edges), truth, run)} |"
        )
    lines += [
        "",
        "jedi and pyright side by side (issue 20): pyright = cg's own call sites answered by pyright through",
        "Sourcegraph's scip-python (tools/npm, given an empty environment, so it reads the project and the",
        "standard library's stubs only), each answer mapped to cg's definition at the line it points to;",
        "union = an edge either resolver has. Executed edges only one of them finds show what combining",
        "would add; edges outside the executed set are not judged here (only the jedi edges are audited).",
        "",
        "| project | executed edges | jedi recall | jedi edges | pyright recall | pyright edges | scip-python s "
        "| union recall | union edges | executed, pyright only | executed, jedi only |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for project, _, truth, graphs, tools, _, _ in results:
        jedi_edges, py = set(graphs["jedi"].edges), tools["pyright"]
        if py.status != "ok":
            lines.append(
                f"| {project.name} | {len(truth)} | {recall(jedi_edges, truth)} | {len(jedi_edges)} "
                f"| {py.status} | - | {py.seconds:.0f} | - | - | - | - |"
            )
            continue
        union = jedi_edges | py.edges
        lines.append(
            f"| {project.name} | {len(truth)} | {recall(jedi_edges, truth)} | {len(jedi_edges)} "
            f"| {recall(py.edges, truth)} | {len(py.edges)} | {py.seconds:.1f} | {recall(union, truth)} "
            f"| {len(union)} | {len(truth & (py.edges - jedi_edges))} | {len(truth & (jedi_edges - py.edges))} |"
        )
    lines += [
        "",
        "Resolve time (the step jedi adds; same run), with the 1-minute load average before and after it:",
        "",
        f"| project | Python LOC | jedi resolve s | jedi s per 1k LOC | load before / after | files over jedi's "
        f"{JEDI_BUDGET:.0f} s budget | name resolve s |",
        "|---|---|---|---|---|---|---|",
    ]
    for project, _, _, graphs, _, _, _ in results:
        jedi, name = graphs["jedi"], graphs["name"]
        lines.append(
            f"| {project.name} | {jedi.loc} | {jedi.seconds:.1f} | {jedi.seconds / jedi.loc * 1000:.2f} "
            f"| {jedi.load_before:.1f} / {jedi.load_after:.1f} | {jedi.over_budget} | {name.seconds:.1f} |"
        )
    lines += [
        "",
        "Why cg (jedi) misses the executed edges it misses, classified from the call site the tracer saw",
        "(the callee's kind first: lambda, dunder, property; then the call written at the caller's line):",
        "",
        "| project | reason | missed edges | e.g. |",
        "|---|---|---|---|",
    ]
    for project, _, _, _, _, misses, _ in results:
        for kind, edges in sorted(misses.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            lines.append(f"| {project.name} | {kind} | {len(edges)} | `{edges[0][0]}` -> `{edges[0][1]}` |")
    lines += [
        "",
        f"Precision audit: {AUDIT_SIZE} in-package jedi edges per project, sampled by the rank of a hash of their",
        "names (seed `" + AUDIT_SEED + "`), each read by hand (caller and callee opened; verdicts and one-line",
        "reasons in benchmarks/audit/<project>.tsv). Precision = correct / (correct + wrong) over the reviewed",
        "edges of the sample; unreviewed edges count neither way.",
        "",
        "| project | sampled | correct | wrong | unclear | unreviewed | precision (reviewed) |",
        "|---|---|---|---|---|---|---|",
    ]
    for project, _, _, _, _, _, checked in results:
        precision = f"{checked['precision']:.3f}" if checked["precision"] is not None else "-"
        lines.append(
            f"| {project.name} | {checked['sample']} | {checked['correct']} | {checked['wrong']} "
            f"| {checked['unclear']} | {len(checked['pending'])} | {precision} |"
        )
    wrong = [(project, edge, reason) for project, *_, checked in results for edge, reason in checked["wrong_edges"]]
    if wrong:
        lines += ["", "The edges judged wrong:", ""]
        lines += [f"- {p.name}: `{e[0]}` -> `{e[1]}`: {reason}" for p, e, reason in wrong]
    pending = [(project, edge) for project, *_, checked in results for edge in checked["pending"]]
    if pending:
        lines += ["", f"Sampled but not reviewed yet ({len(pending)}; benchmarks/data/audit-pending/ has them):", ""]
        lines += [f"- {p.name}: `{e[0]}` -> `{e[1]}`" for p, e in pending]
    return lines


if __name__ == "__main__":
    main()
