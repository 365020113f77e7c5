"""Overrides join a flow as dispatch steps (a call through the base may run them), but only the
library's own: a test that subclasses a view to exercise it is listed among the tests, never printed
as a step of how the framework works (a web framework's trial had ten test views fill the flow of
"how does it dispatch a request to the view function?"). Example and tutorial code that calls into
the flow is no step either, unless the question is about the example."""

from __future__ import annotations

from cg.api import open_index

from ..ingest.helpers import indexed_tree

VIEWS = '''
class View:
    """Subclass this and implement dispatch_request to make a class-based view."""

    methods = None

    def dispatch_request(self, **kwargs):
        """The view function's body: called with the URL's arguments for every request."""
        raise NotImplementedError()

    @classmethod
    def as_view(cls, name):
        """Convert the class into a view function that dispatches each request to an instance."""

        def view(**kwargs):
            self = cls()
            return self.dispatch_request(**kwargs)

        view.__name__ = name
        return view


class MethodView(View):
    """Dispatches a request to the method named like its HTTP method (get, post, ...)."""

    def dispatch_request(self, **kwargs):
        handler = getattr(self, current_method().lower(), None)
        if handler is None:
            raise LookupError("method not allowed")
        return handler(**kwargs)


def current_method():
    return "GET"
'''

TESTS = """
from webkit.views import MethodView, View


def test_basic_view():
    class Index(View):
        def dispatch_request(self):
            return "index"

    assert Index.as_view("index")() == "index"


def test_method_view():
    class Users(MethodView):
        def get(self):
            return "users"

        def dispatch_request(self, **kwargs):
            return super().dispatch_request(**kwargs)

    assert Users.as_view("users")() == "users"
"""


EXAMPLE = '''
from webkit.views import MethodView


class Greeting(MethodView):
    def get(self, name="world"):
        return f"Hello, {name}!"


def create_greeting_app(routes):
    """The tutorial's app: one greeting view registered under /hello."""
    routes["/hello"] = Greeting.as_view("hello")
    return routes
'''


FILES = {
    "webkit/__init__.py": "",
    "webkit/views.py": VIEWS,
    "tests/test_views.py": TESTS,
    "examples/tutorial/hello.py": EXAMPLE,
}


def test_only_the_librarys_overrides_are_dispatch_steps(tmp_path):
    repo = indexed_tree(tmp_path / "webkit-repo", FILES)
    with open_index(repo) as index:
        flow = index.explain("how does a class-based view dispatch the request?")
        made = index.explain("how is a view function made from a class?")  # as_view: the tutorial calls it
        tutorial = index.explain("how does the tutorial's greeting app register its hello view?")
    steps = {node.node["qualname"]: node.role for node in flow.nodes.values()}
    assert "webkit.views.View.dispatch_request" in steps, steps
    assert steps.get("webkit.views.MethodView.dispatch_request") in ("override", "seed", "callee"), steps
    for answer in (flow, made):
        names = [node.node["qualname"] for node in answer.nodes.values()]
        assert "webkit.views.View.dispatch_request" in names, names
        assert not [name for name in names if name.startswith(("tests.", "examples."))], names
    # asked about the tutorial, its code is the answer, and the library it calls follows
    shown = {node.node["qualname"] for node in tutorial.nodes.values()}
    assert "examples.tutorial.hello.create_greeting_app" in shown, shown
    assert "webkit.views.View.as_view" in shown, shown
