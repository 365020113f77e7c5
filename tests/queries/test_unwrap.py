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


HOOKS = '''
from webkit.scaffold import Scaffold, setupmethod


class Hooks(Scaffold):
    """Request hooks nothing in this repository registers yet."""

    @setupmethod
    def teardown_request(self, f):
        self.teardown_funcs = [*getattr(self, "teardown_funcs", []), f]
        return f
'''

REGISTRATION_TESTS = """
from webkit.app import App, Blueprint


def test_blueprint_registration():
    app = App()
    app.register_blueprint(Blueprint("shop"))
    assert "shop" in app.blueprints


def test_error_handler_registration():
    app = App()
    app.register_error_handler(404, lambda error: "missing")
    assert 404 in app.error_handlers
"""


def test_a_caller_of_the_wrapper_reaches_only_the_function_its_line_names(tmp_path):
    """Every test that registers anything calls the wrapper; only the one that registers an error
    handler runs register_error_handler. Before, a wrapped function no caller named kept the wrapper
    as its caller, and with it every caller of the wrapper (Flask: 325 of 326 tests listed for
    ``Scaffold.post`` never ran it)."""
    files = {**FILES, "webkit/hooks.py": HOOKS, "tests/test_registration.py": REGISTRATION_TESTS}
    repo = indexed_tree(tmp_path / "webkit", files)
    with open_index(repo) as index:
        # no line names teardown_request: no caller of the wrapper reaches it
        unused = index.impact("webkit/hooks.py::Hooks.teardown_request")
        assert unused.tests == [] and unused.callers == [], (unused.tests, unused.callers)
        impact = index.impact("webkit/scaffold.py::Scaffold.register_error_handler")
        tests = {a.node["name"] for a in impact.tests}
        assert tests == {"test_error_handler_registration"}, tests
        callers = {
            s.node["qualname"] for s in index.callers("webkit/scaffold.py::Scaffold.register_error_handler").steps
        }
        assert "webkit.scaffold.setupmethod.wrapper_func" not in callers, callers
        # a caller whose line names the function still reaches it through the wrapper
        blueprint = {a.node["name"] for a in index.impact("webkit/app.py::App.register_blueprint").tests}
        assert blueprint == {"test_blueprint_registration"}, blueprint


def test_super_calls_do_not_dispatch_to_a_sibling_classs_override(tmp_path):
    """``super().__init__()`` in App runs Scaffold.__init__, never Blueprint's override of it: App is
    no Blueprint. Before, every test that made an App counted for Blueprint.__init__ (Flask: 212
    tests listed that never ran it)."""
    repo = indexed_tree(tmp_path / "webkit", {**FILES, "tests/test_registration.py": REGISTRATION_TESTS})
    with open_index(repo) as index:
        impact = index.impact("webkit/app.py::Blueprint.__init__")
        assert {a.node["name"] for a in impact.tests} == {"test_blueprint_registration"}
        assert "webkit.app.App.__init__" not in {a.node["qualname"] for a in impact.callers}
        # a call through the base on an object of any class still may dispatch to the override
        assert "webkit.scaffold.Scaffold.__init__" in {m["qualname"] for m in impact.overridden}


SESSIONS = """
class SessionInterface:
    def make_null_session(self, app):
        return {}


class SecureCookieSessionInterface(SessionInterface):
    def open_session(self, app, cookie):
        if not cookie:
            return self.make_null_session(app)
        return {"cookie": cookie}


class NullSessionInterface(SessionInterface):
    def make_null_session(self, app):
        return {"null": True}


def fresh_session(interface, app):
    return interface.make_null_session(app)
"""


def test_a_self_call_dispatches_only_to_overrides_its_class_can_hold(tmp_path):
    """``self.make_null_session`` in SecureCookieSessionInterface runs the base's method or an
    override in a subclass of SecureCookieSessionInterface, never NullSessionInterface's; a call on
    any ``interface`` may run either."""
    repo = indexed_tree(tmp_path / "sessions", {"sessions/__init__.py": "", "sessions/core.py": SESSIONS})
    with open_index(repo) as index:
        callers = {
            s.node["name"] for s in index.callers("sessions/core.py::NullSessionInterface.make_null_session").steps
        }
        assert "open_session" not in callers, callers
        assert "fresh_session" in callers, callers
        base = {s.node["name"] for s in index.callers("sessions/core.py::SessionInterface.make_null_session").steps}
        assert {"open_session", "fresh_session"} <= base, base
