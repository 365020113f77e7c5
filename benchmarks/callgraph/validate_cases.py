"""Validate the call-graph micro-benchmark cases and check their ground truth against a run-time trace.

Usage: python3 benchmarks/callgraph/validate_cases.py [--no-run] [--write] [CASES_DIR | CASE_DIR ...]

Static checks, for every case directory cases/<category>/<case>/:
  * main.py and callgraph.json exist; every .py file parses;
  * callgraph.json is an object of str -> sorted, duplicate-free list of str;
  * the keys are exactly the definitions of the case (modules, classes, functions, methods, nested functions
    and lambdas named `<scope>.<lambdaN>`); an in-case callee is a key and never a module or a class; any
    other callee is a builtin (`<builtin>.len`) or an import path outside the case (`json.dumps`);
  * the builtin and external edges the source names (see README "Semantics", rule 9) are all in the truth.
Unless --no-run, each main.py also runs under a `sys.setprofile` tracer (in a child process, from the case
directory), and the traced edges are diffed against the truth; the only differences allowed are the ones
the README names (generator resumption, call sites a run does not reach, calls of types). --write replaces
each callgraph.json by the edges derived from the trace and the source (review the diff it prints).
The expected categories must exist with at least 4 cases each. Exits 1 if anything is wrong.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import json
import os
import re
import runpy
import subprocess
import sys
import tempfile
import types
from dataclasses import dataclass, field

CATEGORIES = {
    "aliases",
    "args",
    "assignments",
    "builtins",
    "classes",
    "decorators",
    "dicts",
    "direct_calls",
    "dunders",
    "exceptions",
    "external",
    "functions",
    "generators",
    "imports",
    "kwargs",
    "lambdas",
    "lists",
    "mro",
    "properties_and_attributes",
    "relative_imports",
    "returns",
    "super",
}
MIN_PER_CATEGORY = 4
MIN_TOTAL = 110
BUILTIN = "<builtin>"
# Implicit calls that are edges (README rule 2 and 6); a traced call into any other dunder is not an edge.
EDGE_DUNDERS = {
    "__init__",
    "__call__",
    "__iter__",
    "__next__",
    "__enter__",
    "__exit__",
    # operators, subscripts and builtins that run a dunder of their operand (rule 6)
    *("__add__", "__sub__", "__mul__", "__matmul__", "__truediv__", "__floordiv__", "__mod__", "__pow__"),
    *("__lshift__", "__rshift__", "__and__", "__or__", "__xor__", "__neg__", "__pos__", "__invert__"),
    *("__iadd__", "__isub__", "__imul__", "__imatmul__", "__itruediv__", "__ifloordiv__", "__imod__"),
    *("__ipow__", "__ilshift__", "__irshift__", "__iand__", "__ior__", "__ixor__"),
    *("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__contains__"),
    *("__getitem__", "__setitem__", "__delitem__", "__len__", "__str__", "__repr__", "__hash__", "__bool__"),
    *("__abs__", "__reversed__", "__format__", "__int__", "__float__", "__bytes__", "__round__"),
    "__get__",  # reading a class attribute bound to a descriptor
}
COMPREHENSIONS = {"<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"}
GENERATOR_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
Span = tuple[int, int, int, int]  # first line, last line, first column, end column
COMPREHENSION_NODES = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def module_name(case_dir: str, path: str) -> str:
    rel = os.path.relpath(path, case_dir)[: -len(".py")]
    parts = rel.split(os.sep)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def python_files(case_dir: str):
    for root, dirs, files in os.walk(case_dir):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                yield os.path.join(root, name)


def top_level_modules(case_dir: str) -> set[str]:
    """First components of the case's own module names: anything else is outside the case."""
    return {module_name(case_dir, path).split(".")[0] for path in python_files(case_dir)}


@dataclass
class Scope:
    """Names bound in one Python scope; an import binding maps to its import path."""

    kind: str  # module, function, class, comprehension
    bound: set[str] = field(default_factory=set)
    imports: dict[str, str | None] = field(default_factory=dict)  # None: imported from inside the case
    globals: set[str] = field(default_factory=set)


@dataclass
class ModuleFacts:
    """What the AST says about one module: its definitions and the builtin/external calls it names."""

    module: str
    definitions: list[str] = field(default_factory=list)
    lambdas: list[tuple[Span, str]] = field(default_factory=list)  # (body span, name)
    functions: dict[tuple[str, int], str] = field(default_factory=dict)  # (name, first line) -> qualname
    class_bodies: dict[tuple[int, str], str] = field(default_factory=dict)  # (line, class name) -> qualname
    classes: set[str] = field(default_factory=set)  # class qualnames: callers (of their bodies' calls), never callees
    comprehension_owners: list[tuple[Span, str]] = field(default_factory=list)  # (span, owner)
    named_calls: set[tuple[str, str]] = field(default_factory=set)  # (owner, builtin or import path)
    called_names: dict[str, set[str]] = field(default_factory=dict)  # owner -> last names of called exprs
    imported: set[str] = field(default_factory=set)  # modules outside the case that it imports


def node_span(node: ast.expr | ast.stmt) -> Span:
    return (node.lineno, node.end_lineno or node.lineno, node.col_offset, node.end_col_offset or 0)


def first_line(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> int:
    return node.decorator_list[0].lineno if node.decorator_list else node.lineno


class Analyser:
    """Walks one module: names every definition (lambdas counted per enclosing definition) and finds
    the call expressions that name a builtin or something imported from outside the case."""

    def __init__(self, module: str, tree: ast.Module, own_modules: set[str]) -> None:
        self.facts = ModuleFacts(module)
        self.own = own_modules
        self.tree = tree
        self.lambda_counts: dict[str, int] = {}
        self.scope_of: dict[ast.AST, Scope] = {}

    def run(self) -> ModuleFacts:
        self.facts.definitions.append(self.facts.module)
        self.bindings(self.tree, Scope("module"))
        self.visit_all(list(self.tree.body), self.facts.module, self.facts.module, [self.scope_of[self.tree]])
        return self.facts

    # -- bindings ------------------------------------------------------------------------------------
    def bindings(self, root: ast.AST, scope: Scope) -> None:
        """Record the names each scope binds (pass 1), so that pass 2 can resolve any name."""
        self.scope_of[root] = scope
        if isinstance(root, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = root.args
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
                if arg is not None:
                    scope.bound.add(arg.arg)
        stack: list[ast.AST]
        if isinstance(root, ast.Lambda):
            stack = [root.body]
        elif isinstance(root, COMPREHENSION_NODES):
            first, *others = root.generators
            stack = [first.target, *first.ifs, *others]
            stack += [root.key, root.value] if isinstance(root, ast.DictComp) else [root.elt]
        else:
            stack = list(root.body)  # type: ignore[attr-defined]
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                scope.bound.add(node.name)
                stack.extend(node.decorator_list)
                if isinstance(node, ast.ClassDef):
                    stack.extend([*node.bases, *node.keywords])
                else:
                    stack.extend(defaults(node.args))
                self.bindings(node, Scope("class" if isinstance(node, ast.ClassDef) else "function"))
            elif isinstance(node, ast.Lambda):
                stack.extend(defaults(node.args))
                self.bindings(node, Scope("function"))
            elif isinstance(node, COMPREHENSION_NODES):
                stack.append(node.generators[0].iter)  # evaluated in the enclosing scope
                self.bindings(node, Scope("comprehension"))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    top = alias.name.split(".")[0]
                    path = alias.name if alias.asname else top
                    scope.imports[alias.asname or top] = None if top in self.own else path
                    if top not in self.own:
                        self.facts.imported.add(alias.name)
            elif isinstance(node, ast.ImportFrom):
                inside = node.level > 0 or (node.module or "").split(".")[0] in self.own
                for alias in node.names:
                    scope.imports[alias.asname or alias.name] = None if inside else f"{node.module}.{alias.name}"
                if not inside and node.module:
                    self.facts.imported.add(node.module)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                scope.globals.update(node.names)
            else:
                if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                    scope.bound.add(node.id)
                elif isinstance(node, ast.ExceptHandler) and node.name:
                    scope.bound.add(node.name)
                stack.extend(ast.iter_child_nodes(node))

    def resolve_name(self, name: str, chain: list[Scope]) -> str | None:
        """Builtin (`<builtin>.len`) or external import path of a name used in the innermost scope."""
        innermost = chain[-1]
        for scope in reversed(chain):
            if scope.kind == "class" and scope is not innermost:
                continue  # a class body's names are not visible in the functions nested in it
            if name in scope.globals:
                return self.resolve_name(name, chain[:1])
            if name in scope.imports:
                return scope.imports[name]
            if name in scope.bound:
                return None
        return f"{BUILTIN}.{name}" if hasattr(builtins, name) and not name.startswith("__") else None

    def resolve_callee(self, func: ast.expr, chain: list[Scope]) -> str | None:
        attrs: list[str] = []
        while isinstance(func, ast.Attribute):
            attrs.insert(0, func.attr)
            func = func.value
        if not isinstance(func, ast.Name):
            return None
        base = self.resolve_name(func.id, chain)
        if base is None or (attrs and base.startswith(BUILTIN)):
            return None  # methods of builtin objects are not edges
        return ".".join([base, *attrs])

    # -- naming and calls ----------------------------------------------------------------------------
    def called(self, owner: str, func: ast.expr, chain: list[Scope]) -> None:
        target = self.resolve_callee(func, chain)
        if target is not None:
            self.facts.named_calls.add((owner, target))
        last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if last:
            self.facts.called_names.setdefault(owner, set()).add(last)

    def visit_all(self, nodes: list[ast.AST], owner: str, prefix: str, chain: list[Scope]) -> None:
        for node in sorted(nodes, key=source_position):  # source order: lambdas are counted in it
            self.visit(node, owner, prefix, chain)

    def visit(self, node: ast.AST, owner: str, prefix: str, chain: list[Scope]) -> None:
        """``owner`` is the definition that calls in ``node`` belong to; ``prefix`` names new definitions."""
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = f"{prefix}.{node.name}"
            self.facts.definitions.append(name)
            self.facts.functions[(node.name, first_line(node))] = name
            for dec in node.decorator_list:
                self.decorator(dec, owner, prefix, chain)
            self.visit_all(defaults(node.args), owner, prefix, chain)
            self.visit_all(list(node.body), name, name, [*chain, self.scope_of[node]])
        elif isinstance(node, ast.ClassDef):
            # the class body is a caller of its own (PyCG): method decorators, class attribute initialisers;
            # the class's decorators, bases and keywords run in the scope around it
            name = f"{prefix}.{node.name}"
            self.facts.definitions.append(name)
            self.facts.classes.add(name)
            self.facts.class_bodies[(first_line(node), node.name)] = name
            self.facts.class_bodies[(node.lineno, node.name)] = name
            for dec in node.decorator_list:
                self.decorator(dec, owner, prefix, chain)
            self.visit_all([*node.bases, *node.keywords], owner, prefix, chain)
            self.visit_all(list(node.body), name, name, [*chain, self.scope_of[node]])
        elif isinstance(node, ast.Lambda):
            count = self.lambda_counts.get(prefix, 0) + 1
            self.lambda_counts[prefix] = count
            name = f"{prefix}.<lambda{count}>"
            self.facts.definitions.append(name)
            self.facts.lambdas.append((node_span(node.body), name))
            self.visit_all(defaults(node.args), owner, prefix, chain)
            self.visit(node.body, name, name, [*chain, self.scope_of[node]])
        elif isinstance(node, COMPREHENSION_NODES):
            self.facts.comprehension_owners.append((node_span(node), owner))
            first, *others = node.generators
            inner: list[ast.AST] = [first.target, *first.ifs, *others]
            inner += [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            comprehension_chain = [*chain, self.scope_of[node]]
            for part in sorted([first.iter, *inner], key=source_position):
                self.visit(part, owner, prefix, chain if part is first.iter else comprehension_chain)
        else:
            if isinstance(node, ast.Call):
                self.called(owner, node.func, chain)
            self.visit_all(list(ast.iter_child_nodes(node)), owner, prefix, chain)

    def decorator(self, dec: ast.expr, owner: str, prefix: str, chain: list[Scope]) -> None:
        """A decorator expression is called by the scope that defines the decorated name."""
        self.visit(dec, owner, prefix, chain)
        if not isinstance(dec, ast.Call):
            self.called(owner, dec, chain)


def defaults(args: ast.arguments) -> list[ast.AST]:
    return [*args.defaults, *(d for d in args.kw_defaults if d is not None)]


def source_position(node: ast.AST) -> tuple[int, int]:
    """Where ``node`` starts (nodes such as ``ast.comprehension`` carry no position: their first child's)."""
    for sub in ast.walk(node):
        if isinstance(sub, (ast.expr, ast.stmt, ast.excepthandler, ast.keyword, ast.arg)):
            return (sub.lineno, sub.col_offset)
    return (0, 0)


def analyse_case(case_dir: str) -> tuple[dict[str, ModuleFacts], list[str]]:
    own = top_level_modules(case_dir)
    facts: dict[str, ModuleFacts] = {}
    problems = []
    for path in python_files(case_dir):
        mod = module_name(case_dir, path)
        try:
            with open(path, encoding="utf-8") as handle:
                tree = ast.parse(handle.read(), filename=path)
        except SyntaxError as exc:
            problems.append(f"{os.path.relpath(path, case_dir)}: syntax error: {exc}")
            continue
        facts[path] = Analyser(mod, tree, own).run()
    return facts, problems


# -- the tracer (runs in a child process, from the case directory) -----------------------------------


class Tracer:
    """Records the calls ``main.py`` makes, named by the README's conventions (see Semantics)."""

    def __init__(self, case_dir: str) -> None:
        self.case_dir = os.path.realpath(case_dir)
        self.facts, _ = analyse_case(self.case_dir)
        self.names: dict[types.CodeType, tuple[str, str] | None] = {}  # code -> (kind, name)
        self.edges: set[tuple[str, str]] = set()
        self.resumptions: set[tuple[str, str]] = set()
        self.generators: set[str] = set()
        self.ignored: set[tuple[str, str]] = set()
        self.unnamed: set[tuple[str, str]] = set()
        self.external_index: dict[object, str] = {}
        self.indexed_modules: set[str] = set()
        self.sources: dict[str, list[str]] = {}

    # naming of case code
    def classify(self, code: types.CodeType) -> tuple[str, str] | None:
        if code in self.names:
            return self.names[code]
        path = os.path.realpath(code.co_filename)
        facts = self.facts.get(path)
        result: tuple[str, str] | None = None
        if facts is not None:
            if code.co_name == "<module>":
                result = ("module", facts.module)
            elif code.co_name == "<lambda>":
                name = innermost(code, facts.lambdas)
                result = ("function", name) if name else None
            elif code.co_name in COMPREHENSIONS:
                owner = innermost(code, facts.comprehension_owners)
                result = ("body", owner) if owner else None
            elif not code.co_flags & inspect.CO_NEWLOCALS:
                name = facts.class_bodies.get((code.co_firstlineno, code.co_name))
                result = ("class", name) if name else None
            else:
                name = facts.functions.get((code.co_name, code.co_firstlineno))
                result = ("function", name) if name else None
        self.names[code] = result
        return result

    def case_frame(self, frame: types.FrameType | None) -> tuple[types.FrameType, str] | None:
        """The nearest frame on the stack that runs case code, with the definition it belongs to."""
        while frame is not None:
            named = self.classify(frame.f_code)
            if named is not None:
                return frame, named[1]
            frame = frame.f_back
        return None

    # naming of code outside the case, by the import path the case uses
    def index_externals(self) -> None:
        """Name the functions, classes and methods of the modules the case imports by their import path."""
        for mod_name in sorted({m for facts in self.facts.values() for m in facts.imported}):
            module = sys.modules.get(mod_name)
            if module is not None and mod_name not in self.indexed_modules:
                self.indexed_modules.add(mod_name)
                self.index_module(mod_name, module, depth=1)

    def index_module(self, prefix: str, module: types.ModuleType, depth: int) -> None:
        for attr, value in sorted(vars(module).items()):
            if attr.startswith("_"):
                continue
            name = f"{prefix}.{attr}"
            if isinstance(value, types.ModuleType):
                submodule = value.__name__ == f"{module.__name__}.{attr}" or value is getattr(os, "path", None)
                if depth > 0 and submodule:
                    self.index_module(name, value, depth - 1)
            elif isinstance(value, type):
                self.remember(value, name)
                for member, item in vars(value).items():
                    function = getattr(item, "__func__", item)
                    if callable(function):
                        self.remember(getattr(function, "__code__", function), f"{name}.{member}")
            elif callable(value):
                self.remember(getattr(value, "__code__", value), name)

    def remember(self, key: object, name: str) -> None:
        try:
            self.external_index.setdefault(key, name)
        except TypeError:
            pass  # an unhashable callable object: nothing a profile event could name

    def external_name(self, key: object) -> str | None:
        if key not in self.external_index:
            self.index_externals()
        return self.external_index.get(key)

    def names_callee(self, frame: types.FrameType, callee: str) -> bool:
        """Whether the call expression ``frame`` is executing names ``callee``'s last component."""
        filename = frame.f_code.co_filename
        if filename not in self.sources:
            self.sources[filename] = _read_lines(filename)
        lines = list(self.sources[filename])
        positions = list(frame.f_code.co_positions())
        index = frame.f_lasti // 2  # one position per 2-byte code unit
        if not 0 <= index < len(positions):
            return False
        start, end, col, end_col = positions[index]
        if start is None or end is None or col is None or end_col is None:
            return False
        text = lines[start - 1 : end]
        if not text:
            return False
        text[-1] = text[-1][:end_col]
        text[0] = text[0][col:]
        return re.search(rf"\b{re.escape(callee.rsplit('.', 1)[-1])}\b", "\n".join(text)) is not None

    def profile(self, frame: types.FrameType, event: str, arg: object) -> None:
        if event == "call":
            self.on_call(frame)
        elif event == "c_call":
            self.on_c_call(frame, arg)

    def on_call(self, frame: types.FrameType) -> None:
        code = frame.f_code
        named = self.classify(code)
        if named is None:
            caller = frame.f_back
            caller_named = self.classify(caller.f_code) if caller is not None else None
            if caller is None or caller_named is None:
                return
            caller_name = caller_named[1]
            target = self.external_name(code)
            if target is None:
                if not code.co_filename.startswith("<frozen"):  # the import system at work
                    self.unnamed.add((caller_name, f"{code.co_filename}:{code.co_qualname}"))
                return
            if target.rsplit(".", 1)[-1] in {"__init__", "__new__"}:
                target = target.rsplit(".", 1)[0]
            if self.names_callee(caller, target):
                self.edges.add((caller_name, target))
            return
        kind, callee = named
        if kind != "function":
            return  # a module, class body or comprehension running is not a call of a definition (a callee)
        found = self.case_frame(frame.f_back)
        if found is None:
            return
        caller_name = found[1]
        if code.co_flags & GENERATOR_FLAGS:
            self.generators.add(callee)
            self.resumptions.add((caller_name, callee))
            return
        last = callee.rsplit(".", 1)[-1]
        if last.startswith("__") and last.endswith("__") and last not in EDGE_DUNDERS:
            self.ignored.add((caller_name, callee))
            return
        self.edges.add((caller_name, callee))

    def on_c_call(self, frame: types.FrameType, arg: object) -> None:
        named = self.classify(frame.f_code)
        if named is None:
            return
        owner = getattr(arg, "__self__", None)
        name = getattr(arg, "__name__", "")
        if owner is builtins:
            if name.startswith("__"):
                return  # __build_class__ and friends: the machinery of a class statement
            target = f"{BUILTIN}.{name}"
        elif isinstance(owner, types.ModuleType):
            target = self.external_name(arg) or f"{owner.__name__}.{name}"
        else:
            cls = owner if isinstance(owner, type) else type(owner) if owner is not None else None
            cls = cls or getattr(arg, "__objclass__", None)
            if cls is None or cls.__module__ == "builtins":
                return  # methods of builtin objects (list.append, str.join) are not edges
            definer = next((c for c in cls.__mro__ if name in vars(c)), cls)
            base = self.external_name(definer)
            if base is None:
                self.unnamed.add((named[1], f"{cls.__module__}.{cls.__qualname__}.{name}"))
                return
            target = f"{base}.{name}"
        if self.names_callee(frame, target):
            self.edges.add((named[1], target))


def innermost(code: types.CodeType, candidates: list[tuple[Span, str]]) -> str | None:
    """The name whose span is the smallest one holding every instruction of ``code`` (a lambda's body, a
    comprehension): lambdas and comprehensions have no name of their own to match on."""
    positions = [p for p in code.co_positions() if None not in p and p[2:] != (0, 0)]

    def holds(span: Span, pos: tuple) -> bool:
        return (span[0], span[2]) <= (pos[0], pos[2]) and (pos[1], pos[3]) <= (span[1], span[3])

    fitting = [(span, name) for span, name in candidates if all(holds(span, p) for p in positions)]
    if not positions or not fitting:
        return None
    # the spans that fit are nested (AST spans never overlap otherwise): the innermost starts last
    return max(fitting, key=lambda item: (item[0][0], item[0][2], -item[0][1], -item[0][3]))[1]


def _read_lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().splitlines()
    except OSError:
        return []


def trace_child(case_dir: str, out: str) -> None:
    """Run the case's main.py under the tracer and write what it saw to ``out`` (JSON)."""
    sys.path.insert(0, case_dir)
    os.chdir(case_dir)
    tracer = Tracer(case_dir)
    sys.setprofile(tracer.profile)
    try:
        runpy.run_path(os.path.join(case_dir, "main.py"), run_name="__main__")
    finally:
        sys.setprofile(None)
    data = {
        "edges": sorted(tracer.edges),
        "resumptions": sorted(tracer.resumptions),
        "generators": sorted(tracer.generators),
        "ignored": sorted(tracer.ignored),
        "unnamed": sorted(tracer.unnamed),
    }
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(data, handle)


def run_traced(case_dir: str) -> tuple[dict | None, str | None]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "trace.json")
        try:
            proc = subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--trace-child", case_dir, out],
                cwd=case_dir,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
        except subprocess.TimeoutExpired:
            return None, "main.py timed out"
        if proc.returncode != 0:
            tail = proc.stderr.strip().splitlines()[-1:] or ["(no stderr)"]
            return None, f"main.py exited {proc.returncode}: {tail[0]}"
        with open(out, encoding="utf-8") as handle:
            return json.load(handle), None


# -- comparing -----------------------------------------------------------------------------------------


def derived_truth(facts: dict[str, ModuleFacts], trace: dict, old: dict[str, list[str]]) -> dict[str, list[str]]:
    """The call graph the trace and the source give: what --write proposes."""
    keys = [name for f in facts.values() for name in f.definitions]
    graph: dict[str, set[str]] = {name: set() for name in keys}
    for caller, callee in trace["edges"]:
        graph.setdefault(caller, set()).add(callee)
    for f in facts.values():
        for owner, target in f.named_calls:
            graph.setdefault(owner, set()).add(target)
    generators = set(trace["generators"])
    for caller, callees in old.items():  # who creates a generator: the trace cannot tell, the old truth did
        for callee in callees:
            if callee in generators and caller in graph:
                graph[caller].add(callee)
    for caller, callee in trace["resumptions"]:  # a first guess for a new case: the resumer names the generator
        last = callee.rsplit(".", 1)[-1]
        if not any(callee in old.get(c, []) for c in old) and (last in _called(facts, caller) or last in EDGE_DUNDERS):
            graph[caller].add(callee)
    return {k: sorted(v) for k, v in sorted(graph.items())}


def _called(facts: dict[str, ModuleFacts], owner: str) -> set[str]:
    return set().union(*(f.called_names.get(owner, set()) for f in facts.values()))


def compare(facts: dict[str, ModuleFacts], trace: dict, truth: dict[str, list[str]]) -> list[str]:
    """Differences between the truth and the trace that no README rule explains."""
    problems = []
    keys = set(truth)
    truth_edges = {(a, b) for a, bs in truth.items() for b in bs}
    traced = {tuple(e) for e in trace["edges"]}
    generators = set(trace["generators"])
    resumptions = {tuple(e) for e in trace["resumptions"]}
    named = {(o, t) for f in facts.values() for o, t in f.named_calls}
    for caller, callee in sorted(traced - truth_edges):
        problems.append(f"traced but not in the truth: {caller} -> {callee}")
    for caller, callee in sorted(truth_edges - traced):
        if callee in keys:
            if callee in generators and (
                (caller, callee) in resumptions or callee.rsplit(".", 1)[-1] in _called(facts, caller)
            ):
                continue  # rule 7: the call creates the generator, the trace sees who resumes it
            problems.append(f"in the truth but never traced: {caller} -> {callee}")
        elif (caller, callee) not in named:
            problems.append(f"external edge neither traced nor named in the source: {caller} -> {callee}")
    for caller, callee in sorted(named - truth_edges):
        problems.append(f"the source names this call, the truth lacks it: {caller} -> {callee}")
    return problems


def check_case(case_dir: str, run: bool, write: bool) -> list[str]:
    problems = []
    main_py = os.path.join(case_dir, "main.py")
    truth_path = os.path.join(case_dir, "callgraph.json")
    if not os.path.isfile(main_py):
        problems.append("missing main.py")
    if not os.path.isfile(truth_path):
        return problems + ["missing callgraph.json"]
    facts, parse_problems = analyse_case(case_dir)
    problems += parse_problems
    defined = [name for f in facts.values() for name in f.definitions]
    modules = {f.module for f in facts.values()}
    classes = set().union(*(f.classes for f in facts.values()))
    own = top_level_modules(case_dir)
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

    if run or write:
        trace, failure = run_traced(case_dir)
        if failure:
            return problems + [failure]
        assert trace is not None
        if write:
            proposed = derived_truth(facts, trace, truth)
            if proposed != truth:
                for caller in sorted(set(proposed) | set(truth)):
                    before, after = set(truth.get(caller, [])), set(proposed.get(caller, []))
                    for callee in sorted(after - before):
                        print(f"  {os.path.basename(case_dir)}: + {caller} -> {callee}")
                    for callee in sorted(before - after):
                        print(f"  {os.path.basename(case_dir)}: - {caller} -> {callee}")
                with open(truth_path, "w", encoding="utf-8") as handle:
                    json.dump(proposed, handle, indent=2)
                    handle.write("\n")
                truth = proposed
        for caller, target in trace["unnamed"]:
            print(f"  note: {caller} calls outside code with no import path: {target}")
        problems += compare(facts, trace, truth)

    for caller, callees in truth.items():
        if not isinstance(callees, list) or not all(isinstance(c, str) for c in callees):
            problems.append(f"{caller}: value is not a list of strings")
            continue
        if callees != sorted(callees):
            problems.append(f"{caller}: callees not sorted")
        if len(set(callees)) != len(callees):
            problems.append(f"{caller}: duplicate callees")
        for callee in callees:
            if callee.startswith(f"{BUILTIN}."):
                if not hasattr(builtins, callee.split(".", 1)[1]):
                    problems.append(f"{caller} -> {callee}: no such builtin")
            elif callee.split(".")[0] not in own:
                continue  # an import path outside the case
            elif callee not in truth:
                problems.append(f"{caller} -> {callee}: callee is not a key")
            elif callee in modules:
                problems.append(f"{caller} -> {callee}: callee is a module")
            elif callee in classes:
                problems.append(f"{caller} -> {callee}: callee is a class (instantiation reaches __init__)")
    missing = sorted(set(defined) - set(truth))
    unknown = sorted(set(truth) - set(defined))
    if missing:
        problems.append(f"definitions missing from callgraph.json: {missing}")
    if unknown:
        problems.append(f"keys that are not definitions in the case: {unknown}")
    if not run and not write:
        named = {(o, t) for f in facts.values() for o, t in f.named_calls}
        truth_edges = {(a, b) for a, bs in truth.items() for b in bs}
        problems += [
            f"the source names this call, the truth lacks it: {a} -> {b}" for a, b in sorted(named - truth_edges)
        ]
    return problems


def main(argv: list[str]) -> int:
    if argv[:1] == ["--trace-child"]:
        trace_child(argv[1], argv[2])
        return 0
    run = "--no-run" not in argv
    write = "--write" in argv
    args = [a for a in argv if a not in {"--no-run", "--write"}]
    default = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
    if args and all(os.path.isfile(os.path.join(a, "main.py")) for a in args):
        failures = 0
        for case in args:
            for problem in check_case(os.path.abspath(case), run, write):
                print(f"{case}: {problem}")
                failures += 1
        print(f"{len(args)} case(s): {'OK' if not failures else f'{failures} problem(s)'}")
        return 1 if failures else 0
    cases_dir = args[0] if args else default
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
            for problem in check_case(os.path.abspath(os.path.join(category_dir, case)), run, write):
                print(f"{category}/{case}: {problem}")
                failures += 1
    if total < MIN_TOTAL:
        print(f"{total} cases in total, need at least {MIN_TOTAL}")
        failures += 1
    print(f"{total} cases in {len(CATEGORIES)} categories: {'OK' if not failures else f'{failures} problem(s)'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
