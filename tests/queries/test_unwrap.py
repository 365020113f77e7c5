"""Calls through a decorator's wrapper are answered as the call the caller wrote (cg/queries/unwrap.py).

A web framework's trial: every registration method carries ``@setupmethod``, whose nested
``wrapper_func`` runs the decorated function. The graph keeps what runs (caller -> wrapper -> each
decorated function), and read as is that made ``callers add_url_rule`` answer "the wrapper" and an
explain of app set-up wander from ``__init__`` into ``get``, ``post`` and ``delete``."""

from __future__ import annotations

from cg.api import open_index

from ..ingest.helpers import indexed_tree

SCAFFOLD = '''
import functools


def setupmethod(f):
    """Refuse to change the app once it has handled its first request."""

    def wrapper_func(self, *args, **kwargs):
        self._check_setup_finished(f.__name__)
        return f(self, *args, **kwargs)

    return functools.update_wrapper(wrapper_func, f)


class Scaffold:
    def __init__(self):
        self.url_rules = []
        self.error_handlers = {}
        self.started = False

    def _check_setup_finished(self, name):
        if self.started:
            raise AssertionError(f"{name} can no longer be called after the first request")

    @setupmethod
    def add_url_rule(self, rule, endpoint, view):
        """Record a URL rule; the app and the blueprint each say what recording means."""
        self.url_rules.append((rule, endpoint, view))

    @setupmethod
    def register_error_handler(self, code, handler):
        self.error_handlers[code] = handler

    def get(self, rule):
        return self.route(rule, "GET")

    def route(self, rule, method):
        def decorator(view):
            self.add_url_rule(rule, view.__name__, view)
            return view

        return decorator
'''

APP = '''
from webkit.scaffold import Scaffold, setupmethod


class App(Scaffold):
    def __init__(self, static_path="/static"):
        super().__init__()
        self.blueprints = {}
        self.add_url_rule(static_path + "/<path:filename>", "static", self.send_static_file)

    @setupmethod
    def add_url_rule(self, rule, endpoint, view):
        """The app's rules go straight to its URL map."""
        self.url_rules.append((rule, endpoint, view))

    @setupmethod
    def register_blueprint(self, blueprint):
        self.blueprints[blueprint.name] = blueprint
        blueprint.register(self)

    def send_static_file(self, filename):
        return filename


class Blueprint(Scaffold):
    def __init__(self, name):
        super().__init__()
        self.name = name
        self.deferred = []

    @setupmethod
    def add_url_rule(self, rule, endpoint, view):
        """A blueprint defers its rules until it is registered on an app."""
        self.deferred.append(lambda app: app.add_url_rule(rule, endpoint, view))

    def register(self, app):
        for record in self.deferred:
            record(app)
'''

FILES = {"webkit/__init__.py": "", "webkit/scaffold.py": SCAFFOLD, "webkit/app.py": APP}


def _ids(rows):
    return sorted({(r.src.split("::")[1], r.dst.split("::")[1], r.line) for r in rows})


def test_calls_through_a_wrapper_are_the_calls_the_code_writes(tmp_path):
    repo = indexed_tree(tmp_path / "webkit", FILES)
    with open_index(repo) as index:
        store = index.store
        wrapper = "webkit/scaffold.py::setupmethod.wrapper_func"
        app_init = "webkit/app.py::App.__init__"
        # the graph holds what runs: App.__init__ calls the wrapper, the wrapper every decorated method
        raw_out = store.calls([app_init], "out")
        assert wrapper in {r.dst for r in raw_out}
        wrapped = {r.dst.split("::")[1] for r in store.calls([wrapper], "out") if r.other_label == "Symbol"}
        assert {"App.add_url_rule", "Scaffold.add_url_rule", "App.register_blueprint"} <= wrapped

        callers = index.callers("webkit/app.py::App.add_url_rule")
        names = {s.node["qualname"] for s in callers.steps}
        assert "webkit.app.App.__init__" in names, names  # `self.add_url_rule(` in App: App's own
        assert "webkit.scaffold.setupmethod.wrapper_func" not in names, names
        # the base's method is not what App.__init__ calls: App overrides it
        base = {s.node["qualname"] for s in index.callers("webkit/scaffold.py::Scaffold.add_url_rule").steps}
        assert "webkit.app.App.__init__" not in base, base
        assert "webkit.scaffold.Scaffold.route.decorator" in base, base  # a closure: any add_url_rule it names
        assert "webkit.scaffold.setupmethod.wrapper_func" not in base, base

        callees = {s.node.get("qualname") for s in index.callees(app_init).steps}
        assert "webkit.app.App.add_url_rule" in callees, callees
        assert "webkit.scaffold.setupmethod.wrapper_func" not in callees, callees
        assert not {"webkit.app.App.register_blueprint", "webkit.scaffold.Scaffold.register_error_handler"} & callees

        # impact follows the same calls: changing App.add_url_rule reaches App.__init__ through the wrapper
        impact = index.impact("webkit/app.py::App.add_url_rule")
        reached = {a.node["qualname"] for a in impact.callers}
        assert "webkit.app.App.__init__" in reached, reached
        assert "webkit.scaffold.setupmethod.wrapper_func" not in reached, reached

        # and register_blueprint's callers are none of add_url_rule's
        blueprint = {s.node["qualname"] for s in index.callers("webkit/app.py::App.register_blueprint").steps}
        assert "webkit.app.App.__init__" not in blueprint, blueprint


def test_the_wrapper_still_answers_for_what_it_runs_itself(tmp_path):
    repo = indexed_tree(tmp_path / "webkit", FILES)
    with open_index(repo) as index:
        out = {s.node.get("qualname") for s in index.callees("webkit/scaffold.py::setupmethod.wrapper_func").steps}
        # the wrapper's own calls are what the graph holds: every function it wraps
        assert {"webkit.app.App.register_blueprint", "webkit.scaffold.Scaffold.add_url_rule"} <= out, out
