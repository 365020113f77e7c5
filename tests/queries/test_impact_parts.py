"""The pure parts of impact: fixture parameters read from stored signatures."""

from __future__ import annotations

from cg.queries.impact import parameters


def test_parameters_of_a_stored_signature():
    assert parameters("def test_invoice_paid_marks_invoice_paid(app, subscription)") == ["app", "subscription"]
    assert parameters("async def test_stream(self, client: AsyncClient, *, timeout=5.0)") == ["client", "timeout"]
    assert parameters("def broken(:") == []
    assert parameters("") == []


def test_test_functions_are_read_only_once_a_fixture_is_reached(indexed_shop):
    """Matching fixtures to the tests that take them reads every test function's signature: on a big
    unittest-style suite (Django's) that was most of an impact answer's time, though no fixture was
    ever reached. compute_backoff's tests call it directly: no read; create_app is reached through
    the ``app`` fixture: one read, and the tests found through it."""
    from cg.api import open_index
    from cg.queries.impact import impact

    repo, _ = indexed_shop
    with open_index(repo) as index:
        store = index.store
        reads: list[int] = []
        real = store.test_functions

        def counting():
            reads.append(1)
            return real()

        store.test_functions = counting
        try:
            direct = impact(store, index.lookup("compute_backoff"))
            assert direct.tests and reads == []
            through = impact(store, index.lookup("create_app"))
            assert {a.resolved_by for a in through.tests} >= {"fixture"} and reads == [1]
        finally:
            del store.test_functions


WSGI_APP = '''
class Webapp:
    """A WSGI application: the server (or a test client) calls the instance for every request."""

    def __init__(self, name):
        self.name = name
        self.view_functions = {}

    def __call__(self, environ, start_response):
        return self.wsgi_app(environ, start_response)

    def wsgi_app(self, environ, start_response):
        response = self.full_dispatch_request(environ)
        return response(environ, start_response)

    def full_dispatch_request(self, environ):
        return self.dispatch_request(environ)

    def dispatch_request(self, environ):
        return self.view_functions[environ["PATH_INFO"]]()
'''

CONFTEST = """
import pytest
from werkzeug.test import Client

from webapp.app import Webapp


@pytest.fixture
def app():
    return Webapp("webapp_test")


@pytest.fixture
def client(app):
    return Client(app)
"""

TESTS = """
def test_index_page(app, client):
    app.view_functions["/"] = lambda: "hello"
    assert client.get("/").text == "hello"


def test_missing_page_is_a_key_error(client):
    client.get("/nowhere")
"""


def test_tests_that_drive_an_app_through_its_instance_reach_its_dispatch(tmp_path):
    """A WSGI app's dispatch runs when the server, or a test client from another package, calls the
    instance: no static call reaches ``__call__``. Code that makes the instance is taken as its caller
    (``resolved_by`` "instance"), so the tests that get the app through fixtures count."""
    from cg.api import open_index
    from cg.queries.impact import impact

    from ..ingest.helpers import indexed_tree

    files = {"webapp/__init__.py": "", "webapp/app.py": WSGI_APP, "tests/conftest.py": CONFTEST}
    root = indexed_tree(tmp_path / "webapp-repo", {**files, "tests/test_pages.py": TESTS})
    with open_index(root) as index:
        result = impact(index.store, index.lookup("Webapp.dispatch_request"))
    tests = {a.node["qualname"]: a for a in result.tests}
    assert set(tests) == {"tests.test_pages.test_index_page", "tests.test_pages.test_missing_page_is_a_key_error"}
    # the callers list stays the library's own; the instance edge is named as what it is
    assert [a.node["qualname"] for a in result.callers] == [
        "webapp.app.Webapp.full_dispatch_request",
        "webapp.app.Webapp.wsgi_app",
        "webapp.app.Webapp.__call__",
    ]
    assert all(a.weakest == "instance" for a in tests.values())


SQLKIT = {
    "sqlkit/__init__.py": "",
    "sqlkit/lexer.py": '''
        class Lexer:
            """Splits SQL into words."""

            def tokens(self, sql):
                return sql.split()
        ''',
    "sqlkit/filters.py": """
        class StripCommentsFilter:
            def process(self, statement):
                return [word for word in statement if not word.startswith("--")]


        class KeywordCaseFilter:
            def __init__(self, case):
                self.case = case

            def process(self, statement):
                return [getattr(word, self.case)() for word in statement]
        """,
    "sqlkit/stack.py": """
        from sqlkit.lexer import Lexer

        LEXERS = {"ansi": Lexer}  # dialects register their lexers here


        class FilterStack:
            def __init__(self, dialect="ansi"):
                self.stmtprocess = []
                self.lexer: Lexer = LEXERS[dialect]()

            def run(self, sql):
                statement = self.lexer.tokens(sql)
                for filter_ in self.stmtprocess:
                    statement = filter_.process(statement)
                return statement
        """,
    "sqlkit/api.py": """
        from sqlkit.filters import KeywordCaseFilter, StripCommentsFilter
        from sqlkit.stack import FilterStack


        def parse(sql):
            return FilterStack().run(sql)


        def format(sql, strip_comments=False, keyword_case=None):
            stack = FilterStack()
            if strip_comments:
                stack.stmtprocess.append(StripCommentsFilter())
            if keyword_case:
                stack.stmtprocess.append(KeywordCaseFilter(keyword_case))
            return stack.run(sql)
        """,
    "tests/test_parse.py": """
        from sqlkit.api import parse


        def test_parse_splits_words():
            assert parse("select 1") == ["select", "1"]
        """,
    "tests/test_format.py": """
        from sqlkit.api import format
        from sqlkit.lexer import Lexer


        def test_strip_comments():
            assert format("select 1 --x", strip_comments=True) == ["select", "1"]


        def test_keyword_case():
            assert format("select 1", keyword_case="upper") == ["SELECT", "1"]


        def test_lexer_alone():
            assert Lexer().tokens("a b") == ["a", "b"]
        """,
}


def _tests_of(root, resolver, symbol):
    from cg.api import open_index
    from cg.queries.impact import impact

    with open_index(root, resolver=resolver) as index:
        return sorted(a.node["qualname"].rsplit(".", 1)[-1] for a in impact(index.store, index.lookup(symbol)).tests)


def test_a_method_counts_only_the_tests_that_can_make_its_instance(tmp_path):
    """sqlparse's filter stack runs ``filter_.process(stmt)`` over a list ``format()`` fills: the
    graph rightly says the stack may run any filter, but a filter's method runs only where an instance
    of it exists, and only ``format()`` makes one. Every parse test listed every filter before (on
    sqlparse, 5,302 listed (filter method, test) pairs that its suite never ran:
    benchmarks/impact_tests.py)."""
    from ..ingest.helpers import indexed_tree

    root = indexed_tree(tmp_path / "sqlkit-repo", SQLKIT)
    assert _tests_of(root, "jedi", "StripCommentsFilter.process") == ["test_keyword_case", "test_strip_comments"]
    # a constructor and a method of a class made by the library itself are left alone
    every = ["test_keyword_case", "test_parse_splits_words", "test_strip_comments"]
    assert _tests_of(root, "jedi", "FilterStack.run") == every


def test_a_class_held_as_a_value_keeps_every_test_that_reaches_its_methods(tmp_path):
    """``LEXERS = {"ansi": Lexer}`` then ``LEXERS[dialect]()``: the name resolver sees no call of
    ``Lexer`` in stack.py, only a test's ``Lexer()``. A library file that imports the class and never
    calls it may make instances any way it likes, so the rule stands down and the parse test, whose
    stack lexes, still counts."""
    from ..ingest.helpers import indexed_tree

    root = indexed_tree(tmp_path / "sqlkit-repo", SQLKIT, resolver="name")
    assert _tests_of(root, "name", "Lexer.tokens") == [
        "test_keyword_case",
        "test_lexer_alone",
        "test_parse_splits_words",
        "test_strip_comments",
    ]


RECORDS = {
    "billing/__init__.py": "",
    "billing/documents.py": """
        class Document:
            def __init__(self, number, lines):
                self.number = number
                self.lines = lines

            @classmethod
            def from_row(cls, row):
                return cls(row["number"], row.get("lines", []))

            def total_cents(self):
                return sum(line["cents"] for line in self.lines)


        class CreditNote(Document):
            def total_cents(self):
                return -super().total_cents()

            def reason(self):
                return "refund"
        """,
    "tests/test_credit_notes.py": """
        from billing.documents import CreditNote


        def test_a_credit_note_from_a_row_is_negative():
            note = CreditNote.from_row({"number": "CN-1", "lines": [{"cents": 500}]})
            assert note.total_cents() == -500


        def test_a_credit_note_states_its_reason():
            assert CreditNote("CN-2", []).reason() == "refund"
        """,
}


def test_an_instance_made_by_an_inherited_factory_classmethod_counts(tmp_path):
    """``CreditNote.from_row(...)`` makes a CreditNote through ``Document.from_row``'s ``cls(...)``,
    which the graph records as a call of ``Document``: a caller of a factory classmethod up the
    class's bases may make an instance, so the first test keeps ``CreditNote.total_cents`` though the
    other test makes credit notes the plain way."""
    from ..ingest.helpers import indexed_tree

    root = indexed_tree(tmp_path / "billing-repo", RECORDS)
    assert "test_a_credit_note_from_a_row_is_negative" in _tests_of(root, "jedi", "CreditNote.total_cents")
