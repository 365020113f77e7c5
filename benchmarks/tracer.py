"""A pytest plugin that records which functions of one package call which, while its test suite runs.

Loaded by benchmarks/executed_edges.py as ``python -m pytest -p tracer`` with three variables set:
``CG_TRACE_ROOT`` (the directory the package is imported from), ``CG_TRACE_PACKAGE`` (its top-level
name) and ``CG_TRACE_OUT`` (where the edges go, as JSON). ``sys.setprofile`` sees every Python-level
call (Python 3.11 has no ``sys.monitoring``); an edge is kept when both the calling and the called
code live in the package's files. Names follow `cg callgraph`'s convention (the PyCG one): the dotted
module, then the definition's qualified name with ``<locals>`` left out, a module's own code under
the module's name. A comprehension or generator expression belongs to the function around it; calls
*into* lambdas and comprehensions are counted apart (a call graph has no name for them), and a class
body running when its module is imported is not a call.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
import threading
from pathlib import Path
from types import CodeType, FrameType

_ANONYMOUS = ("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>", "<lambda>")


class Recorder:
    def __init__(self, root: Path, package: str) -> None:
        self.root = root
        self.package = package
        self.names: dict[CodeType, str | None] = {}
        self.edges: set[tuple[str, str]] = set()
        self.anonymous_callees = 0
        self.nested: set[str] = set()  # definitions made inside a function (closures, decorator wrappers)

    def name(self, code: CodeType) -> str | None:
        """The dotted name of the definition ``code`` belongs to, or None outside the package."""
        if code in self.names:
            return self.names[code]
        name = None
        try:
            rel = Path(code.co_filename).resolve().relative_to(self.root)
        except ValueError:
            rel = None
        if rel is not None and rel.suffix == ".py" and rel.parts[0] == self.package:
            parts = list(rel.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            module = ".".join(parts)
            scope = [p for p in code.co_qualname.split(".") if p != "<locals>"]
            while scope and scope[-1] in _ANONYMOUS:
                scope.pop()  # a comprehension's or lambda's code belongs to the definition around it
            name = module if code.co_name == "<module>" else ".".join([module, *scope]) if scope else module
        self.names[code] = name
        return name

    def profile(self, frame: FrameType, event: str, _arg: object) -> None:
        if event != "call":
            return
        callee = self.name(frame.f_code)
        if callee is None:
            return
        caller_frame = frame.f_back
        if caller_frame is None:
            return
        caller = self.name(caller_frame.f_code)
        if caller is None:
            return
        if not frame.f_code.co_flags & inspect.CO_NEWLOCALS:
            return  # a module or class body running at import: a definition, not a call
        if frame.f_code.co_name in _ANONYMOUS:
            self.anonymous_callees += 1
            return
        self.edges.add((caller, callee))
        if "<locals>" in frame.f_code.co_qualname:
            self.nested.add(callee)


_recorder: Recorder | None = None


def pytest_configure(config) -> None:  # noqa: ANN001 (pytest's hook signature)
    global _recorder
    _recorder = Recorder(Path(os.environ["CG_TRACE_ROOT"]).resolve(), os.environ["CG_TRACE_PACKAGE"])
    threading.setprofile(_recorder.profile)
    sys.setprofile(_recorder.profile)


def pytest_unconfigure(config) -> None:  # noqa: ANN001
    sys.setprofile(None)
    threading.setprofile(None)  # type: ignore[arg-type]
    if _recorder is None:
        return
    data = {
        "edges": sorted(_recorder.edges),
        "anonymous_callees": _recorder.anonymous_callees,
        "nested": sorted(_recorder.nested),
    }
    Path(os.environ["CG_TRACE_OUT"]).write_text(json.dumps(data))
