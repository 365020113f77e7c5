"""Which definitions a name in a question pins, on a small HTTP client whose class ``Request`` and whose
functions ``request`` are different things (as in requests, httpx and starlette)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from cg.api import open_index

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


def _repo(root: Path) -> Path:
    for path, text in {"wire/__init__.py": "", "wire/models.py": MODELS, "wire/client.py": CLIENT}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(text).lstrip(), "utf-8")
    return root


def test_a_one_word_class_name_pins_the_class_not_the_same_word_in_lower_case(tmp_path):
    repo = _repo(tmp_path / "wire-repo")
    with open_index(repo, read_only=False, create=True, history_commits=0) as writer:
        writer.index()
    with open_index(repo) as index:
        hits = index.search("Cleanup `Request` method parameter", limit=5).hits
        missing = index.search("Drop unused Request.cookies", limit=5).hits
        attribute = index.search("Make Request.content optional", limit=5).hits
    pinned = [h.symbol["qualname"] for h in hits if "exact" in h.ranks]
    assert pinned == ["wire.models.Request"], [h.symbol["qualname"] for h in hits]
    # a member the class does not have: the class; one its constructor assigns: the constructor too
    assert [h.symbol["qualname"] for h in missing if "exact" in h.ranks] == ["wire.models.Request"]
    assert {h.symbol["qualname"] for h in attribute if "exact" in h.ranks} == {
        "wire.models.Request",
        "wire.models.Request.__init__",
    }
