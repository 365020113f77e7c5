"""A pytest plugin that records which definitions of one package call which, while its test suite runs.

Loaded by benchmarks/executed_edges.py as ``python -m pytest -p tracer`` with three variables set:
``CG_TRACE_ROOT`` (the directory the package is imported from), ``CG_TRACE_PACKAGE`` (its top-level
name) and ``CG_TRACE_OUT`` (where the edges go, as JSON). On Python 3.12+ the calls come from
``sys.monitoring`` (PY_START and PY_RESUME, code outside the package switched off after its first
event, so the rest of the run is not slowed); before 3.12 from ``sys.profile``'s ``call`` events,
which fire at the same points (a function's start and each resumption of a generator).

The edge definition (the conventions of `cg callgraph --format json`, so the dynamic truth and the
static output can be compared name for name):

- An edge is caller -> callee where both are code of the package's own files; the caller is the
  Python frame that was running when the callee started (a builtin in between, such as ``sorted``
  calling its ``key``, is invisible: the edge comes from the frame that called the builtin).
- Names: the dotted module, then the definition's qualified name without ``<locals>``; a module's
  own code is the module's name, a class body the class's qualified name.
- A decorator is called by the scope that defines the decorated function (the module or class body
  running at import), which is what the interpreter does; a decorator factory ``@dec(arg)`` gives
  that scope -> ``dec`` and that scope -> the decorator ``dec`` returned.
- A lambda is a definition ``<scope>.<lambdaN>``: N counts the lambdas whose nearest enclosing
  definition (module, class, function or lambda) is that scope, from 1 in source order (found by
  parsing the file and matching the code's position). Calls inside a lambda are the lambda's.
- Comprehensions and generator expressions belong to the definition around them: their own code
  objects are neither callers nor callees.
- Module and class bodies running at import are definitions being made, never callees.
- A generator (or coroutine) function is called where it is called, not where it runs: calling it
  only makes the generator object, and its body runs later, in whichever frame iterates it (rule 7
  of benchmarks/callgraph/README.md, as in PyCG's micro-benchmark and `cg callgraph`). On 3.12+ the
  edge comes from ``sys.monitoring``'s CALL event at the call site (the callable is the generator
  function); each start or resumption of its body is kept apart as a *resumption* (iterating frame
  -> generator), reported but not an edge. ``sys.setprofile`` sees no such call, only the body's
  first start in the iterating frame, so before 3.12 a generator's edge comes from the iterating
  frame (the earlier convention; the dump says which).

Each edge also keeps up to three caller lines (for the miss classification), and a second name set
under the earlier convention (lambdas folded into the definition around them, calls into them not
counted) so earlier numbers can be reproduced.

Per test (``reached``, for benchmarks/impact_tests.py): the package's definitions that started while
pytest ran one test's setup, call and teardown, by the test's node id, whoever called them (the test
itself, a fixture, a client, another library). A fixture of a wider scope is made during the first
test that needs it and is counted for that test only.
"""

from __future__ import annotations

import ast
import inspect
import json
import os
import sys
import threading
from pathlib import Path
from types import CodeType, FrameType

_COMPREHENSIONS = ("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>")
# code whose call makes an object and runs nothing: generators, async generators, coroutines
_LAZY = inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR | inspect.CO_COROUTINE
_LINES_KEPT = 3


class _Lambdas:
    """The convention names of a file's lambdas, by the source span of each one's body."""

    def __init__(self, module: str, source: str) -> None:
        self.spans: list[tuple[tuple[int, int], tuple[int, int], str]] = []
        self.by_line: dict[int, list[tuple[str, bool]]] = {}  # line of `lambda` -> (name, body is a constant)
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            return
        self._visit(tree, module, {})

    def _visit(self, node: ast.AST, scope: str, counters: dict[str, int]) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            # decorators, defaults and bases run in the enclosing scope; the body in the new one
            outer: list[ast.AST] = [*node.decorator_list]
            if isinstance(node, ast.ClassDef):
                outer += [*node.bases, *node.keywords]
            else:
                outer += [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
            for expr in outer:
                self._visit(expr, scope, counters)
            for stmt in node.body:
                self._visit(stmt, f"{scope}.{node.name}", counters)
        elif isinstance(node, ast.Lambda):
            counters[scope] = counters.get(scope, 0) + 1
            name = f"{scope}.<lambda{counters[scope]}>"
            body = node.body
            end = (body.end_lineno or body.lineno, body.end_col_offset or 0)
            self.spans.append(((body.lineno, body.col_offset), end, name))
            self.by_line.setdefault(node.lineno, []).append((name, isinstance(body, ast.Constant)))
            for expr in [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]:
                self._visit(expr, scope, counters)
            self._visit(node.body, name, counters)
        else:
            for child in ast.iter_child_nodes(node):
                self._visit(child, scope, counters)

    def innermost(self, first: tuple[int, int], last: tuple[int, int]) -> str | None:
        """The lambda whose body is the smallest one holding the code that spans ``first``..``last``."""
        best: tuple[tuple[int, int], tuple[int, int], str] | None = None
        for start, end, name in self.spans:
            if start <= first and last <= end and (best is None or (start, best[1]) >= (best[0], end)):
                best = (start, end, name)  # bodies nest: the one starting last (ending first) is the innermost
        return best[2] if best else None

    def without_positions(self, line: int) -> str | None:
        """The lambda starting at ``line`` whose code has no source positions: on 3.12 `lambda x: True`
        compiles to one RETURN_CONST whose position is (line, line, 0, 0), so no span can place it."""
        lambdas = self.by_line.get(line, [])
        constant = [name for name, is_constant in lambdas if is_constant]
        if len(lambdas) == 1:
            return lambdas[0][0]
        return constant[0] if len(constant) == 1 else None


class Recorder:
    def __init__(self, root: Path, package: str) -> None:
        self.root = root
        self.package = package
        self.names: dict[CodeType, tuple[str, str] | None] = {}  # code -> (name, earlier-convention name)
        self.lambdas: dict[str, _Lambdas] = {}
        self.edges: dict[tuple[str, str], set[int]] = {}
        self.legacy: set[tuple[str, str]] = set()
        self.comprehension_starts = 0
        self.nested: set[str] = set()  # definitions made inside a function (closures, decorator wrappers)
        self.resumed: set[tuple[str, str]] = set()  # iterating frame -> generator whose body it ran (3.12+)
        self.lazy: set[str] = set()  # the generator and coroutine functions seen (3.12+)
        self.creations = _use_monitoring()  # generator edges from their call sites (CALL events)
        self.lock = threading.Lock()
        self.test: str | None = None  # the node id of the test pytest is running (setup to teardown)
        self.reached: dict[str, set[str]] = {}  # test node id -> the package's definitions that started

    def module_of(self, code: CodeType) -> str | None:
        try:
            rel = Path(code.co_filename).resolve().relative_to(self.root)
        except ValueError:
            return None
        if rel.suffix != ".py" or rel.parts[0] != self.package:
            return None
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        return ".".join(parts)

    def name(self, code: CodeType) -> tuple[str, str] | None:
        """The definition ``code`` belongs to (this convention, the earlier one), or None outside the package."""
        if code in self.names:
            return self.names[code]
        module = self.module_of(code)
        result = None
        if module is not None:
            scope = [p for p in code.co_qualname.split(".") if p != "<locals>"]
            while scope and scope[-1] in _COMPREHENSIONS:
                scope.pop()  # a comprehension's code belongs to the definition around it
            legacy_scope = scope[: scope.index("<lambda>")] if "<lambda>" in scope else scope
            legacy = ".".join([module, *legacy_scope]) if code.co_name != "<module>" and legacy_scope else module
            if "<lambda>" in scope:
                name = self._lambda_name(code, module) or legacy
            else:
                name = ".".join([module, *scope]) if code.co_name != "<module>" and scope else module
            result = (name, legacy)
        self.names[code] = result
        return result

    def _lambda_name(self, code: CodeType, module: str) -> str | None:
        lambdas = self.lambdas.get(code.co_filename)
        if lambdas is None:
            try:
                source = Path(code.co_filename).read_text(encoding="utf-8")
            except OSError:
                source = ""
            lambdas = self.lambdas[code.co_filename] = _Lambdas(module, source)
        # the instruction spanning the most (a lambda's return of its body, a comprehension's build);
        # (line, line, 0, 0) is the synthetic position of the code's own entry
        spans: list[tuple[tuple[int, int], tuple[int, int]]] = []
        for line, end_line, col, end_col in code.co_positions():
            if line is not None and end_line is not None and col is not None and end_col is not None:
                if (col, end_col) != (0, 0):
                    spans.append(((line, col), (end_line, -end_col)))
        if not spans:
            return lambdas.without_positions(code.co_firstlineno)
        first, last = min(spans)  # the earliest start, then the latest end
        return lambdas.innermost(first, (last[0], -last[1]))

    def record(self, callee_frame: FrameType) -> bool:
        """Record the call that started ``callee_frame``; False when its code is not the package's."""
        code = callee_frame.f_code
        callee = self.name(code)
        if callee is None:
            return False
        caller_frame = callee_frame.f_back
        if caller_frame is None or not code.co_flags & inspect.CO_NEWLOCALS:
            return True  # a module or class body running at import: a definition, not a call
        if code.co_name in _COMPREHENSIONS:
            self.comprehension_starts += 1
            return True
        test = self.test
        if test is not None:
            with self.lock:
                self.reached.setdefault(test, set()).add(callee[0])
        caller = self.name(caller_frame.f_code)
        if caller is None:
            return True
        if self.creations and code.co_flags & _LAZY:
            with self.lock:
                self.resumed.add((caller[0], callee[0]))
                self.lazy.add(callee[0])
            return True
        self._add(caller, callee, code, caller_frame.f_lineno or 0)
        return True

    def _add(self, caller: tuple[str, str], callee: tuple[str, str], code: CodeType, line: int) -> None:
        with self.lock:
            lines = self.edges.setdefault((caller[0], callee[0]), set())
            if len(lines) < _LINES_KEPT:
                lines.add(line)
            if code.co_name != "<lambda>":
                self.legacy.add((caller[1], callee[1]))
            if "<locals>" in code.co_qualname:
                self.nested.add(callee[0])

    def called(self, code: CodeType, _offset: int, target: object, _arg0: object) -> object:
        """sys.monitoring's CALL (3.12+): a call of a generator or coroutine function of the package is
        an edge from the calling definition, where the call is written."""
        caller = self.name(code)
        if caller is None:
            return sys.monitoring.DISABLE  # type: ignore[attr-defined]  # 3.12+: a call site outside the package
        function = getattr(target, "__func__", target)  # a bound method calls its function
        callee_code = getattr(function, "__code__", None)
        if not isinstance(callee_code, CodeType) or not callee_code.co_flags & _LAZY:
            return None
        callee = self.name(callee_code)
        if callee is not None and callee_code.co_name not in _COMPREHENSIONS:
            self._add(caller, callee, callee_code, sys._getframe(1).f_lineno or 0)
            with self.lock:
                self.lazy.add(callee[0])
        return None

    # sys.setprofile (before 3.12)
    def profile(self, frame: FrameType, event: str, _arg: object) -> None:
        if event == "call":
            self.record(frame)

    # sys.monitoring (3.12+): the frame the callback runs over is the callee's
    def started(self, _code: CodeType, _offset: int) -> object:
        if self.record(sys._getframe(1)):
            return None
        return sys.monitoring.DISABLE  # type: ignore[attr-defined]  # 3.12+

    def dump(self, path: Path) -> None:
        data = {
            "tracer": "sys.monitoring" if _use_monitoring() else "sys.setprofile",
            "edges": [[a, b, sorted(lines)] for (a, b), lines in sorted(self.edges.items())],
            "legacy_edges": sorted(self.legacy),
            "comprehension_starts": self.comprehension_starts,
            "nested": sorted(self.nested),
            "generators": "called" if self.creations else "first started",
            "resumed": sorted(self.resumed),
            "lazy": sorted(self.lazy),
            "reached": {test: sorted(names) for test, names in sorted(self.reached.items())},
        }
        path.write_text(json.dumps(data))


_TOOL = 4  # a sys.monitoring tool id no debugger, profiler or coverage tool claims (they use 0-2 and 5)
_recorder: Recorder | None = None


def _use_monitoring() -> bool:
    return sys.version_info >= (3, 12)


def pytest_configure(config) -> None:  # noqa: ANN001 (pytest's hook signature)
    global _recorder
    _recorder = Recorder(Path(os.environ["CG_TRACE_ROOT"]).resolve(), os.environ["CG_TRACE_PACKAGE"])
    if _use_monitoring():
        mon = sys.monitoring  # type: ignore[attr-defined]
        mon.use_tool_id(_TOOL, "cg executed edges")
        events = mon.events.PY_START | mon.events.PY_RESUME | mon.events.CALL
        mon.register_callback(_TOOL, mon.events.PY_START, _recorder.started)
        mon.register_callback(_TOOL, mon.events.PY_RESUME, _recorder.started)
        mon.register_callback(_TOOL, mon.events.CALL, _recorder.called)
        mon.set_events(_TOOL, events)
    else:
        threading.setprofile(_recorder.profile)
        sys.setprofile(_recorder.profile)


def _runtest_protocol(item, nextitem):  # noqa: ANN001, ANN202 (pytest's hook signature)
    """Which test the definitions starting now belong to: its setup, call and teardown."""
    if _recorder is not None:  # the test file's absolute path: pytest's rootdir may lie above the project
        _recorder.test = f"{Path(item.path).resolve()}::{item.nodeid.partition('::')[2]}"
    try:
        yield
    finally:
        if _recorder is not None:
            _recorder.test = None


try:  # the hook only under pytest: the tracer also runs on a bare interpreter (tests/test_executed_edges.py)
    import pytest
except ImportError:
    pass
else:
    pytest_runtest_protocol = pytest.hookimpl(hookwrapper=True)(_runtest_protocol)


def pytest_unconfigure(config) -> None:  # noqa: ANN001
    if _use_monitoring():
        mon = sys.monitoring  # type: ignore[attr-defined]
        mon.set_events(_TOOL, 0)
        mon.free_tool_id(_TOOL)
    else:
        sys.setprofile(None)
        threading.setprofile(None)
    if _recorder is not None:
        _recorder.dump(Path(os.environ["CG_TRACE_OUT"]))
