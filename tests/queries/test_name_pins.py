"""Which definitions a name in a question pins, on a small HTTP client whose class ``Request`` and whose
functions ``request`` are different things (as in requests, httpx and starlette)."""

from __future__ import annotations

import pytest

from cg.api import open_index
from cg.queries.lookup import is_stub, is_test
from cg.queries.query import Query
from cg.queries.search import candidates

from ..ingest.helpers import indexed_tree

MODELS = '''
class Request:
    """An outgoing HTTP request: method, URL, headers and an optional body."""

    def __init__(self, method, url, headers=None, content=b""):
        self.method = method.upper()
        self.url = url
        self.headers = dict(headers or {})
        self.content = content

    def prepare_headers(self):
        self.headers.setdefault("Content-Length", str(len(self.content)))
        return self.headers
'''

CLIENT = '''
from .models import Request


class Client:
    """Sends requests over one pooled connection."""

    def __init__(self, transport):
        self.transport = transport

    def request(self, method, url, **kwargs):
        """Build a Request and send it."""
        return self.send(Request(method, url, **kwargs))

    def send(self, request):
        request.prepare_headers()
        return self.transport.handle(request)


def request(method, url, **kwargs):
    """Send one request with a throwaway client."""
    return Client(transport=None).request(method, url, **kwargs)
'''


def pinned(hits) -> list[str]:
    """The qualified names of the hits a name in the question pinned."""
    return [h.symbol["qualname"] for h in hits if "exact" in h.ranks]


def test_a_one_word_class_name_pins_the_class_not_the_same_word_in_lower_case(tmp_path):
    files = {"wire/__init__.py": "", "wire/models.py": MODELS, "wire/client.py": CLIENT}
    repo = indexed_tree(tmp_path / "wire-repo", files)
    with open_index(repo) as index:
        hits = index.search("Cleanup `Request` method parameter", limit=5).hits
        missing = index.search("Drop unused Request.cookies", limit=5).hits
        attribute = index.search("Make Request.content optional", limit=5).hits
    assert pinned(hits) == ["wire.models.Request"], [h.symbol["qualname"] for h in hits]
    # a member the class does not have: the class; one its constructor assigns: the constructor too
    assert pinned(missing) == ["wire.models.Request"]
    assert set(pinned(attribute)) == {
        "wire.models.Request",
        "wire.models.Request.__init__",
    }


APP = '''
from .http import Request


class Webapp:
    """A WSGI application: routes URLs to view functions."""

    def __init__(self):
        self.view_functions = {}
        self.url_map = {}

    def __call__(self, environ, start_response):
        return self.wsgi_app(environ, start_response)

    def wsgi_app(self, environ, start_response):
        request = Request(environ)
        response = self.full_dispatch_request(request)
        return response(environ, start_response)

    def full_dispatch_request(self, request):
        rv = self.preprocess_request(request)
        if rv is None:
            rv = self.dispatch_request(request)
        return self.finalize_request(rv)

    def preprocess_request(self, request):
        return None

    def dispatch_request(self, request):
        """Match the URL to its endpoint and call the view function registered for it."""
        endpoint, args = self.url_map[request.path]
        return self.view_functions[endpoint](**args)

    def finalize_request(self, rv):
        return rv
'''

HTTP = """
class Request:
    def __init__(self, environ):
        self.path = environ.get("PATH_INFO", "/")
"""

VIEWS = '''
class View:
    """A class-based view."""

    def dispatch_request(self, **kwargs):
        """The view function's behaviour: subclasses override this to dispatch a request to a view."""
        raise NotImplementedError

    @classmethod
    def as_view(cls, name):
        def view(**kwargs):
            return cls().dispatch_request(**kwargs)

        view.__name__ = name
        return view
'''


def test_a_class_named_in_prose_picks_its_own_method_and_the_flow_opens_on_it(tmp_path):
    files = {"webapp/__init__.py": "", "webapp/app.py": APP, "webapp/http.py": HTTP, "webapp/views.py": VIEWS}
    root = indexed_tree(tmp_path / "webapp-repo", files)
    question = "how does Webapp dispatch a request to a view function?"
    with open_index(root) as index:
        hits = index.search(question, limit=5).hits
        flow = index.explain(question)
    # "Webapp ... dispatch a request": Webapp.dispatch_request, not View's method of the same words
    assert hits[0].symbol["qualname"] == "webapp.app.Webapp.dispatch_request", [h.symbol["qualname"] for h in hits]
    # the walkthrough starts where that method's flow starts, not at the other class's entry point
    names = [flow.nodes[i].node["qualname"] for i in flow.order]
    assert names.index("webapp.app.Webapp.dispatch_request") < names.index("webapp.views.View.dispatch_request"), names
    assert names[0].startswith("webapp.app.Webapp."), names


def test_a_class_named_in_lower_case_picks_the_method_it_is_followed_by(tmp_path):
    files = {"webapp/__init__.py": "", "webapp/app.py": APP, "webapp/http.py": HTTP, "webapp/views.py": VIEWS}
    root = indexed_tree(tmp_path / "webapp-repo", files)
    with open_index(root) as index:
        lower = index.search("how does webapp dispatch a request to a view function?", limit=5).hits
        # "view" is View in lower case, but "dispatch a request" does not follow it: no pin
        later = index.search("how do we dispatch a request to a view?", limit=5).hits
    assert pinned(lower) == ["webapp.app.Webapp.dispatch_request"], [h.symbol["qualname"] for h in lower]
    assert not pinned(later), [h.symbol["qualname"] for h in later]


HOOKS = '''
class Scaffold:
    def __init__(self):
        self.before_request_funcs = []

    def before_request(self, func):
        """Register a function to run before each request."""
        self.before_request_funcs.append(func)
        return func

    def preprocess_request(self):
        """Run the before_request hooks; the first that returns a value ends the request."""
        for func in self.before_request_funcs:
            rv = func()
            if rv is not None:
                return rv
        return None
'''

HOOK_TESTS = """
from hooked.scaffold import Scaffold


def test_a_hook_can_end_the_request():
    app = Scaffold()

    @app.before_request
    def before_request():
        return "stopped"

    assert app.preprocess_request() == "stopped"
"""


def test_a_test_function_under_the_named_hook_is_not_pinned_beside_the_library_method(tmp_path):
    files = {"hooked/__init__.py": "", "hooked/scaffold.py": HOOKS, "tests/test_hooks.py": HOOK_TESTS}
    root = indexed_tree(tmp_path / "hooked-repo", files)
    with open_index(root) as index:
        hits = index.search("how are before_request hooks run", limit=5).hits
        about_tests = index.search("which test defines a before_request hook", limit=5).hits
    assert pinned(hits) == ["hooked.scaffold.Scaffold.before_request"], [h.symbol["qualname"] for h in hits]
    # a question about tests keeps the test's function among the pins
    assert any(is_test(h.symbol) for h in about_tests if "exact" in h.ranks), [h.symbol for h in about_tests]


PARAMETERS = '''
import os


class Parameter:
    """A command-line parameter: its name, its default and where its value comes from."""

    def __init__(self, name, default=None, envvar=None):
        self.name = name
        self.default = default
        self.envvar = envvar

    def resolve_envvar_value(self, ctx):
        """The value the variable named by ``envvar`` holds, or None when it is unset or empty."""
        rv = os.getenv(self.envvar) if self.envvar else None
        return rv or None

    def get_default(self, ctx):
        """The default when the command line does not give the parameter."""
        return self.default() if callable(self.default) else self.default

    def consume_value(self, ctx, opts):
        """The value from the command line, else from the environment, else the default."""
        value = opts.get(self.name)
        if value is None:
            value = self.resolve_envvar_value(ctx)
        if value is None:
            value = self.get_default(ctx)
        return value
'''

FORMATTING = '''
def format_help_record(name, help_text, width=78):
    """One line of the help page: a parameter's name, padded, then its help text, wrapped to width."""
    return f"{name:<24}{help_text}"[:width]


def print_variables(values):
    """Print each variable name with its value, one a line, the way the debug page shows them."""
    for key, value in sorted(values.items()):
        print(f"{key} = {value!r}")
'''


def test_a_question_in_full_words_finds_the_code_that_abbreviates_them(tmp_path, monkeypatch):
    files = {"cli/__init__.py": "", "cli/params.py": PARAMETERS, "cli/formatting.py": FORMATTING}
    root = indexed_tree(tmp_path / "cli-repo", files)
    question = "where are environment variables read for parameter defaults?"
    assert Query.parse(question).expansions == ("env", "envvar", "var", "param")
    resolve = "cli.params.Parameter.resolve_envvar_value"
    with open_index(root) as index:
        result = index.search(question, limit=5)
        monkeypatch.setattr("cg.queries.query.query_expansions", lambda text: ())
        without = index.search(question, limit=5).hits
    names = [h.symbol["qualname"] for h in result.hits]
    # the lexical arm sees envvar for "environment variables" (consume_value, whose docstring says
    # "from the environment", is a fair first); without the short forms it falls behind
    assert resolve in names[:2], names
    assert names.index(resolve) < [h.symbol["qualname"] for h in without].index(resolve), names
    # coverage (explain's "names what was asked") still counts the question's own words only
    assert "envvar" not in result.query.terms


@pytest.mark.parametrize(
    ("text", "stub"),
    [
        ('def dispatch_request(self):\n    """Subclasses override this."""\n    raise NotImplementedError()\n', True),
        (
            "def handle_request(self, request):\n    raise NotImplementedError(\n"
            '        "The handle_request method must be implemented."\n    )  # pragma: no cover\n',
            True,
        ),
        ("def close(self) -> None:\n    pass  # nothing to release\n", True),
        ("def handle_request(\n    self, request: Request\n) -> Response:\n    raise NotImplementedError\n", True),
        ("def send(\n    self,\n    request,\n) -> Response:\n    return self._transport.handle(request)\n", False),
        ("def on_enter(self, state): ...\n", True),
        # an overload is one signature of a function implemented below it, not a stub
        ("@typing.overload\ndef compile(\n    self,\n    source: str,\n) -> CodeType: ...\n", False),
        ('def validate(self, value):\n    """Hook: check the value."""\n', True),
        ("abstract charge(amountCents: number): Promise<Receipt>;", True),
        ('charge(amountCents) {\n  throw new Error("not implemented");\n}', True),
        ('func (g *Gateway) Refund(id string) error {\n\tpanic("not implemented")\n}', True),
        ("def total_cents(self):\n    return self._total_cents\n", False),
        ("def renew(self):\n    self.period += 1\n    return create_invoice(self)\n", False),
        (
            "def charge(self, invoice):\n    if not invoice.due:\n        raise NotImplementedError\n    return 1\n",
            False,
        ),
    ],
)
def test_a_stub_is_a_body_that_does_nothing_but_say_so(text, stub):
    assert is_stub({"kind": "method", "text": text}) is stub


def test_a_stub_is_a_ranking_feature(tmp_path):
    files = {"webapp/__init__.py": "", "webapp/app.py": APP, "webapp/http.py": HTTP, "webapp/views.py": VIEWS}
    root = indexed_tree(tmp_path / "webapp-repo", files)
    with open_index(root) as index:
        query = Query.parse("how do we dispatch a request to a view?").with_vector(index.embedder)
        pool, symbols, features, _ = candidates(index.store, query, 10, index.ranking, with_features=True)
    assert features is not None
    by_name = {symbols[doc]["qualname"]: features[doc]["stub"] for doc, _, _ in pool if doc in symbols}
    assert by_name["webapp.views.View.dispatch_request"] == 1.0
    assert by_name["webapp.app.Webapp.dispatch_request"] == 0.0


def test_a_test_seeds_the_flow_only_when_the_question_is_about_tests(tmp_path):
    files = {"hooked/__init__.py": "", "hooked/scaffold.py": HOOKS, "tests/test_hooks.py": HOOK_TESTS}
    root = indexed_tree(tmp_path / "hooked-repo", files)
    with open_index(root) as index:
        flow = index.explain("how is a hook that returns stopped handled")
    assert flow.seeds and not [h for h in flow.seeds if is_test(h.symbol)], [h.id for h in flow.seeds]
