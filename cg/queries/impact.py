"""``cg impact SYMBOL``: what breaks if SYMBOL changes.

Four lists: transitive callers by depth, subclasses and overriding methods, the files that import
it (for a method: the files importing its class in which code reaches the method), and the test
functions that reach it over CALLS. Callers of the base-class methods a method on
the walk overrides are callers too (a call through the base may dispatch here): they join the walk
with ``resolved_by`` "dispatch", by the rule ``cg path`` and ``cg explain`` follow as well
(cg/queries/expand.py, ``callers_with_dispatch``).

Ranking: by distance first (a direct caller breaks before a caller of a caller), then by the weakest
edge on the path (a chain resolved by jedi all the way is a certain dependency; one bare-name match
on it makes the whole chain a possible one), then by place. Each caller keeps the path it was first
reached by, at its smallest depth and, among equal depths, through the most precise edge, so the
answer can show why it is affected. Tests are searched deeper than ``depth`` (tests usually reach
code through helpers and fixtures) and are listed apart, not as callers; helpers inside test files
only carry the walk.

Fixtures. pytest calls a fixture for every test (or fixture) that names it as a parameter, so the
walk treats that as a call: when it reaches a fixture (a function in a test file decorated with
``pytest.fixture`` or ``fixture``), the test-file functions with a parameter of the fixture's name,
in the fixture's file or, for a fixture in a ``conftest.py``, anywhere under its folder, join as its
callers with ``resolved_by`` "fixture" (pytest's own name matching; a ``name=`` alias and
``usefixtures`` are not read). A test that drives the code through an object a fixture built (the
app, a test client) calls its methods on the parameter, which the resolver matches where it can;
the fixture edge then adds the tests whose only link to the code is the fixture itself.

Registries. A test client drives an app through its dispatcher, which calls the handler it looked up
at run time: no static edge reaches the handler. The walk adds one where the graph shows the pattern:
a definition decorated by a method of a class (``@router.route(...)`` is ``Router.route``, a DECORATES
edge) is called by each method of that class that makes a call the resolver could not resolve
(``Router.dispatch`` calls ``handler(request)``), with ``resolved_by`` "registry" and that call's line.
So a test that calls ``app.router.dispatch(...)`` reaches the routes and what they call.

Instances. A WSGI or ASGI application runs when the server, or a test client from another package,
calls the instance: ``Flask.__call__`` -> ``wsgi_app`` -> ``full_dispatch_request`` -> ``dispatch_request``
has no static caller above ``__call__``, so a test that gets the app from a fixture and drives it
through werkzeug's client reached nothing (Flask's dispatch counted 2 tests of hundreds). When the walk
reaches a class's ``__call__``, the code that makes an instance of the class (a CALLS edge to the
class) joins as its caller with ``resolved_by`` "instance", the least trusted of the walk's edges:
making a callable object is not calling it, but it is how such objects get called. The ``app``
fixture makes the app, so every test taking ``app`` or a ``client`` built from it counts.

Instances needed. The other way round, a method of an instance runs only in a test that makes an
instance of its class (or of a subclass): a second walk from the code that calls the class keeps
only the tests that reach one of those makers. sqlparse's ``FilterStack.run`` loops over filters that
only ``format()`` appends, and the graph rightly lets the loop run any filter's ``process``, so every
parse test was listed for every filter: 5,302 (method, test) pairs its suite never ran, on the
traced benchmark (benchmarks/impact_tests.py), and none that ran was lost there or on Flask. The
rule stands down where it cannot see every maker (see ``_instance_makers``): an instance made when
a library module is imported, a class held as a value by a library file, no maker at all.
"""

from __future__ import annotations

import ast
import posixpath
import sys
from dataclasses import dataclass, field
from typing import Any

from cg.graph.store import CallRow, GraphReader
from cg.model import ResolvedBy, edge_rank
from cg.queries.expand import callers_with_dispatch, class_closure, related_methods
from cg.queries.explain import decorator_names
from cg.queries.lookup import citation, cited, is_test, is_test_function, short_id
from cg.queries.unwrap import for_answers

# How far up the callers a test may be and still count as reaching the symbol: chosen by
# benchmarks/impact_tests.py against the tests three projects' suites really run, each project scored
# at the depth the other two pick (F2, recall first: a test left off the list ships a change
# untested). A WSGI app's dispatch is 7-8 hops from the test that builds the app (a session cookie
# setter, under save_session, process_response, full_dispatch_request, wsgi_app, __call__, the app
# fixture), which depth 6 missed.
TEST_DEPTH = 8
MAX_NODES = 5000  # a walk that reaches more than this many callers stops (and says so)


@dataclass
class Affected:
    node: dict[str, Any]
    depth: int
    via: str  # the node one step closer to the symbol
    line: int  # call site, in this node
    resolved_by: str  # of that call
    weakest: str  # least precise resolution on the path to the symbol

    def as_dict(self) -> dict[str, Any]:
        return {
            **cited(self.node),
            "depth": self.depth,
            "via": self.via,
            "line": self.line,
            "resolved_by": self.resolved_by,
            "weakest": self.weakest,
        }


@dataclass
class Impact:
    symbol: dict[str, Any]
    depth: int
    callers: list[Affected] = field(default_factory=list)
    tests: list[Affected] = field(default_factory=list)
    subclasses: list[dict[str, Any]] = field(default_factory=list)
    overrides: list[dict[str, Any]] = field(default_factory=list)  # methods overriding it in subclasses
    overridden: list[dict[str, Any]] = field(default_factory=list)  # base methods it overrides
    importers: list[dict[str, Any]] = field(default_factory=list)
    truncated: bool = False

    def counts_by_depth(self) -> dict[int, int]:
        counts: dict[int, int] = {}
        for a in self.callers:
            counts[a.depth] = counts.get(a.depth, 0) + 1
        return dict(sorted(counts.items()))

    def as_dict(self) -> dict[str, Any]:
        def brief(n: dict[str, Any]) -> dict[str, Any]:
            return {"id": n["id"], "qualname": n.get("qualname"), "citation": citation(n)}

        return {
            "symbol": {**brief(self.symbol), "kind": self.symbol.get("kind")},
            "depth": self.depth,
            "counts_by_depth": {str(d): n for d, n in self.counts_by_depth().items()},
            "callers": [a.as_dict() for a in self.callers],
            "tests": [a.as_dict() for a in self.tests],
            "subclasses": [brief(n) for n in self.subclasses],
            "overrides": [brief(n) for n in self.overrides],
            "overridden": [brief(n) for n in self.overridden],
            "importers": self.importers,
            "truncated": self.truncated,
        }


def _rank(a: Affected) -> tuple:
    return (a.depth, edge_rank(a.weakest), a.node.get("path") or "", a.line)


def impact(store: GraphReader, symbol: dict[str, Any], depth: int = 3, test_depth: int | None = None) -> Impact:
    """What breaks if ``symbol`` (a node from ``resolve_symbol``) changes: callers up to ``depth`` hops,
    the tests that reach it (within ``test_depth`` hops, default TEST_DEPTH), subclasses, overrides and
    importers."""
    test_depth = TEST_DEPTH if test_depth is None else test_depth
    store = for_answers(store)  # the walk re-reads its frontiers and class hierarchies
    result = Impact(symbol, depth)
    target = symbol["id"]
    overridden = [m for _, m in related_methods(store, [symbol], "out")]
    result.overridden = overridden
    result.overrides = [m for _, m in related_methods(store, [symbol], "in")]
    if symbol.get("kind") == "class":
        closure = _subclasses(store, target)
        result.subclasses = list(store.symbols(closure, with_text=False).values())
        result.subclasses.sort(key=lambda n: n["qualname"])

    fixtures = _Fixtures(store)
    reached, result.truncated = _walk(store, fixtures, [target], max(depth, test_depth))
    listed = any(is_test_function(a.node) for a in reached.values())
    made = _instance_makers(store, symbol) if listed else None
    if made is not None:  # a method of an instance runs only in a test that makes one (see _instance_makers)
        makers, test_files = made
        making, _ = _walk(store, fixtures, makers, test_depth)
        can_make = set(making) | set(makers)
    for a in sorted(reached.values(), key=_rank):
        if is_test_function(a.node):
            if made is None or a.node["id"] in can_make or a.node.get("path") in test_files:
                result.tests.append(a)
        elif not is_test(a.node) and a.depth <= depth:
            result.callers.append(a)

    result.importers = _importers(store, symbol, {a.node.get("path") for a in reached.values()})
    return result


def _walk(store: GraphReader, fixtures: _Fixtures, start: list[str], levels: int) -> tuple[dict[str, Affected], bool]:
    """The callers of ``start`` up to ``levels`` hops by every rule of the module docstring, each with
    its nearest path (the one with the most trusted weakest edge at the fewest hops); and whether the
    walk stopped at MAX_NODES."""
    reached: dict[str, Affected] = {}
    weakest = {sid: "jedi" for sid in start}
    frontier = list(start)
    for level in range(1, levels + 1):
        if not frontier:
            break
        best: dict[str, Affected] = {}
        extra = fixtures.users(frontier) + registry_callers(store, frontier) + instance_callers(store, frontier)
        for row in callers_with_dispatch(store, frontier) + extra:
            if row.src in reached or row.src in weakest:
                continue
            resolved = row.resolved_by
            worst = max(resolved, weakest[row.dst], key=edge_rank)
            candidate = Affected(row.other, level, row.dst, row.line, resolved, worst)
            current = best.get(row.src)
            if current is None or (edge_rank(worst), row.line) < (edge_rank(current.weakest), current.line):
                best[row.src] = candidate
        reached.update(best)
        for sid, a in best.items():
            weakest[sid] = a.weakest
        frontier = list(best)
        if len(reached) > MAX_NODES:
            return reached, True
    return reached, False


def _instance_makers(store: GraphReader, symbol: dict[str, Any]) -> tuple[list[str], set[str]] | None:
    """The code that makes an instance of the class of an instance method (of the class or a
    subclass: a CALLS edge to the class, ``Filter()``, ``cls()`` in a classmethod; callers of a
    factory classmethod up the bases, ``_factories``), or None where the rule does not apply: not an
    instance method (a function, a static or class method, a constructor), no maker in the
    repository (the instances come from elsewhere), or one that runs when a module outside the tests
    is imported (``testing = ConfigAttribute("TESTING")`` in a class body, ``bp = Blueprint("blog",
    __name__)`` in an example app: the instance exists for whoever imports it, at any distance), or
    a library file that imports the class and never calls it: it holds the class as a value and may
    make instances anywhere (``json_provider_class = DefaultJSONProvider``, made by
    ``self.json_provider_class(self)``; a package's ``__init__.py`` only re-exports). Beside the
    makers, the test files that make one at their top level: their own tests have it."""
    if symbol.get("kind") != "method" or symbol.get("name") in ("__init__", "__new__", "__init_subclass__"):
        return None
    node = store.symbols([symbol["id"]], with_text=True).get(symbol["id"]) or symbol
    if decorator_names(node.get("text") or "") & {"staticmethod", "classmethod"}:
        return None
    owner = node.get("parent_id")
    classes = store.symbols([owner], with_text=False) if owner else {}
    if not owner or (classes.get(owner) or {}).get("kind") != "class":
        return None
    family = [owner, *_subclasses(store, owner)]
    rows = [r for r in store.calls(family, "in") if r.other_label == "Symbol"]
    rows += [r for r in store.calls(_factories(store, family), "in") if r.other_label == "Symbol"]
    on_import = [r.other for r in rows if r.other.get("kind") in ("class", "module")]
    if not rows or any(not is_test(n) for n in on_import):
        return None  # made when a module is imported (a descriptor in a class body): always there
    making_files = {r.other.get("path") for r in rows}
    for path, _, _ in store.importers(family):
        if path not in making_files and not path.endswith("__init__.py") and not is_test({"path": path}):
            return None  # imported and never called there: held as a value (a factory attribute)
    # made when a test file is imported (``bp = Blueprint("admin", __name__)`` at its top): its tests
    return sorted({r.src for r in rows}), {n.get("path") or "" for n in on_import}


def _factories(store: GraphReader, family: list[str]) -> list[str]:
    """The classmethods of these classes and their bases that make ``cls`` instances (``return
    cls(fields)``): called on a subclass (``Customer.create(...)``) one makes an instance of it,
    which the graph records as a call of the class that defines the classmethod."""
    classes = [*family, *class_closure(store, family, "out")]
    methods = [m["id"] for m in store.members(classes) if m.get("kind") == "method"]
    return [
        sid
        for sid, node in store.symbols(methods, with_text=True).items()
        if "cls(" in (node.get("text") or "") and "classmethod" in decorator_names(node.get("text") or "")
    ]


def registry_callers(store: GraphReader, ids: list[str]) -> list[CallRow]:
    """The dispatchers of the registries that hold these definitions, as CALLS rows (see the module
    docstring): for each in-repo decorator of ``ids`` that is a method, the methods of its class with
    an unresolved call."""
    found = store.decorators(ids)
    if not found:
        return []
    decorators = store.symbols(sorted({d for d, _, _ in found}), with_text=False)
    classes = sorted({n["parent_id"] for n in decorators.values() if n.get("kind") == "method" and n.get("parent_id")})
    if not classes:
        return []
    methods = {m["id"]: m for m in store.members(classes) if m.get("kind") == "method"}
    dispatch_line: dict[str, int] = {}
    for row in store.calls(sorted(methods), "out"):
        if row.other_label != "Symbol" and row.resolved_by == "unresolved" and row.src not in decorators:
            dispatch_line[row.src] = min(dispatch_line.get(row.src, row.line), row.line)
    rows = []
    for decorator, decorated, _ in found:
        owner = decorators.get(decorator, {}).get("parent_id")
        for method_id, line in sorted(dispatch_line.items()):
            if methods[method_id].get("parent_id") == owner:
                rows.append(CallRow(method_id, decorated, line, "registry", methods[method_id], "Symbol"))
    return rows


def instance_callers(store: GraphReader, ids: list[str]) -> list[CallRow]:
    """The code that makes an instance of the class of each ``__call__`` among ``ids``, as CALLS rows
    into that ``__call__`` (see the module docstring)."""
    calls = {
        node["parent_id"]: sid
        for sid, node in store.symbols(ids, with_text=False).items()
        if node.get("name") == "__call__" and node.get("parent_id")
    }
    if not calls:
        return []
    return [
        CallRow(row.src, calls[row.dst], row.line, ResolvedBy.INSTANCE, row.other, "Symbol")
        for row in store.calls(sorted(calls), "in")
        if row.other_label == "Symbol" and row.dst in calls
    ]


def parameters(signature: str) -> list[str]:
    """The parameter names of a stored signature (``def test_paid(app, subscription)``); [] if it does
    not parse. The text is parsed by ``ast``, never run."""
    head = signature.strip().removeprefix("async ").rstrip(":")
    try:
        tree = ast.parse(head + ": pass")
    except SyntaxError:
        return []
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.FunctionDef):
        return []
    args = node.args
    return [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs] if a.arg not in ("self", "cls")]


class _Fixtures:
    """pytest's fixture matching as CALLS rows (see the module docstring); reads the test files'
    functions once, and only when the walk reaches a definition in a test file."""

    def __init__(self, store: GraphReader) -> None:
        self.store = store
        self._by_param: dict[str, list[dict[str, Any]]] | None = None

    def users(self, ids: list[str]) -> list[CallRow]:
        in_tests = [i for i, n in self.store.symbols(ids, with_text=False).items() if is_test(n)]
        if not in_tests:
            return []
        fixtures = {
            fid: fixture
            for fid, fixture in self.store.symbols(in_tests).items()
            if "fixture" in decorator_names(fixture.get("text") or "")
        }
        if not fixtures:  # a test-file definition that is no fixture: nothing to match (Django's tests)
            return []
        if self._by_param is None:  # every test function's parameters, read once the first fixture is reached
            self._by_param = {}
            for fn in self.store.test_functions():
                for name in parameters(fn.get("signature") or ""):
                    self._by_param.setdefault(name, []).append(fn)
        rows = []
        for fid, fixture in fixtures.items():
            folder = posixpath.dirname(fixture["path"])
            shared = posixpath.basename(fixture["path"]) == "conftest.py"
            for user in self._by_param.get(fixture["name"], []):
                path = user.get("path") or ""
                if user["id"] != fid and (path == fixture["path"] or (shared and _under(path, folder))):
                    rows.append(CallRow(user["id"], fid, int(user.get("start_line") or 0), "fixture", user, "Symbol"))
        return rows


def _under(path: str, folder: str) -> bool:
    return not folder or path.startswith(folder + "/")


def _importers(store: GraphReader, symbol: dict[str, Any], caller_files: set[str | None]) -> list[dict[str, Any]]:
    """The files that import the symbol (a module: the file itself too). A method is imported through
    its class, but a file that imports the class is a dependent of the method only if code in it
    reaches the method (one of the callers or tests found above lives there): the others use the class
    for something else, and listing them all would drown the answer in every user of the class."""
    rows = set(store.importers([symbol["id"]] + ([symbol["path"]] if symbol.get("kind") == "module" else [])))
    if symbol.get("kind") == "method" and symbol.get("parent_id"):
        rows |= {row for row in store.importers([symbol["parent_id"]]) if row[0] in caller_files}
    return [{"file": f, "imports": dst, "line": line} for f, dst, line in sorted(rows)]


def _subclasses(store: GraphReader, class_id: str) -> list[str]:
    """Every subclass of the class, at any depth (no cap: impact must list them all)."""
    return list(class_closure(store, [class_id], "in", limit=sys.maxsize))


def render_impact(result: Impact) -> str:
    s = result.symbol
    out = [f"# Impact of changing {s['qualname']} ({s.get('kind')}) {citation(s)}", ""]
    counts = result.counts_by_depth()
    summary = ", ".join(f"depth {d}: {n}" for d, n in counts.items()) or "none"
    out.append(f"Callers within {result.depth} hops: {len(result.callers)} ({summary})")
    for a in result.callers:
        how = a.resolved_by + (f", weakest on the path: {a.weakest}" if a.weakest != a.resolved_by else "")
        out.append(
            f"{'  ' * a.depth}{a.depth}. {a.node.get('qualname')} {citation(a.node)}"
            f" calls {short_id(a.via)} at line {a.line} ({how})"
        )
    if result.truncated:
        out.append(f"  (stopped after {MAX_NODES} callers)")
    out.append("")
    out.append(f"Tests that reach it: {len(result.tests)}")
    for a in result.tests:
        out.append(f"  - {a.node.get('qualname')} {citation(a.node)} ({a.depth} hop{'s' if a.depth > 1 else ''})")
    for title, items in (
        ("Subclasses", result.subclasses),
        ("Overridden in subclasses by", result.overrides),
        ("Overrides (callers of these may dispatch here)", result.overridden),
    ):
        if items:
            out.append("")
            out.append(f"{title}: {len(items)}")
            out.extend(f"  - {n.get('qualname')} {citation(n)}" for n in items)
    out.append("")
    out.append(f"Imported by: {len(result.importers)} file(s)")
    out.extend(f"  - {i['file']}:{i['line']} imports {short_id(i['imports'])}" for i in result.importers)
    return "\n".join(out)
