"""One symbol from what a user types: an id (``path::Scope.name``), a qualified name, a unique short
name or dotted suffix (``RetryPolicy.delay_for``), or ``path:line`` (the innermost named definition around
that line: a line with ``key=lambda job: ...`` on it means the function it is in; the lambda is reached by
its id). An ambiguous name is an error that lists the candidates, never a silent pick."""

from __future__ import annotations

import difflib
import re
from typing import Any

from cg.errors import CgError
from cg.graph.store import GraphReader

_PATH_LINE = re.compile(r"(?P<path>[^:]+):(?P<line>\d+)")
_SHOWN = 8
_TEST_FOLDERS = frozenset({"tests", "test", "testing", "__tests__"})


def source_line(node: dict[str, Any], line: int) -> str:
    """Line ``line`` of the file, read from ``node``'s stored text ("" outside it): where a call edge of
    a definition sits (its ``line``), without reading the file."""
    lines = (node.get("text") or "").splitlines()
    at = line - int(node.get("start_line") or 0)
    return lines[at] if 0 <= at < len(lines) else ""


def citation(node: dict[str, Any]) -> str:
    """``[path:start-end]``, the form every answer cites code in (a definition, a doc section). The end
    is never before the start: an empty file, or a node stored with a bad end, reads ``[path:1-1]``."""
    if not node.get("path"):
        return "[external]"
    start = max(int(node.get("start_line") or 1), 1)
    end = max(int(node.get("end_line") or 0), start)
    return f"[{node['path']}:{start}-{end}]"


def cited(node: dict[str, Any]) -> dict[str, Any]:
    """The fields a JSON answer gives a definition: what it is, where, and its citation."""
    keys = ("id", "qualname", "kind", "path", "start_line", "end_line")
    return {**{k: node.get(k) for k in keys}, "citation": citation(node)}


# A stub: a function or method whose body only says that it is not implemented here (an abstract
# method, a protocol's or an interface's member, a hook left for subclasses): Python's ``pass``,
# ``...`` or ``raise NotImplementedError``, a bare docstring; ``throw new Error("not implemented")`` or
# ``UnsupportedOperationException``; Rust's ``unimplemented!()``/``todo!()``; Go's
# ``panic("not implemented")``; a signature without a body (``abstract``, TypeScript overloads). It
# explains no flow: a question about how something works wants the overriding method that does it.
_STUB_STATEMENT = re.compile(
    r"(?:raise\s+NotImplementedError\b.*|pass|\.\.\.|return\s+NotImplemented"
    r"|throw\s+new\s+\w*(?:Error|Exception)\(\s*(?:\"[^\"]*not\s+implemented[^\"]*\")?\s*\);?"
    r"|(?:unimplemented|todo)!\(.*\);?|panic\(\"[^\"]*not\s+implemented[^\"]*\"\))",
    re.I,
)
_DOCSTRING = re.compile(r'^\s*[rRuUbB]?("""|\'\'\')(?:.|\n)*?\1', re.M)
_COMMENT = re.compile(r"^\s*(?:#|//|/\*|\*).*$")
_TRAILING_COMMENT = re.compile(r"\s+(?:#|//)[^\"']*$")  # "# pragma: no cover" after a statement
_OVERLOAD = re.compile(r"@(?:typing\.|t\.)?overload\b")
STUB_LINES = 40  # longer definitions are never stubs (and their text is not fetched to check)


def is_stub(node: dict[str, Any]) -> bool:
    """A function or method whose stored ``text`` is a stub (see ``_STUB_STATEMENT``)."""
    if node.get("kind") not in ("function", "method"):
        return False
    text = _DOCSTRING.sub("", node.get("text") or "")
    lines = [_TRAILING_COMMENT.sub("", line).strip() for line in text.splitlines() if not _COMMENT.match(line)]
    lines = [line for line in lines if line]
    if any(_OVERLOAD.match(line) for line in lines):
        return False  # an overload's signature: one face of the function, whose body is elsewhere
    lines = [line for line in lines if not line.startswith("@")]  # decorators
    if not lines:
        return False
    head, body = lines[0], lines[1:]
    depth = head.count("(") - head.count(")")
    while depth > 0 and body:  # a signature over several lines: its head ends where its parentheses close
        head, body = f"{head} {body[0]}", body[1:]
        depth = head.count("(") - head.count(")")
    if head.rstrip().endswith(";") and "{" not in head:  # a signature without a body
        return True
    if head.rstrip().endswith("{") or head.rstrip().endswith(":"):
        body = [b for b in body if b not in ("}", "};")]
    else:  # a one-line definition: the body follows the signature on its line
        body = [re.split(r"\)\s*(?:->\s*[^:]+)?:\s*|\{\s*", head, maxsplit=1)[-1].rstrip("}").strip()]
    if len(body) > 1 and body[0].startswith(("raise NotImplementedError(", "throw new")):
        joined = " ".join(body)  # one statement over several lines: the message wrapped
        if joined.count("(") == joined.count(")") and joined.rstrip(";").endswith(")"):
            body = [joined]
    return len(body) <= 1 and all(_STUB_STATEMENT.fullmatch(b) for b in body)


_DUPLICATE = re.compile(r"~\d+")


def short_id(symbol_id: str) -> str:
    """The id as a reader sees it: the scope after ``path::``, without the ``~2`` ingest appends to the id
    of a second definition of the same name (an internal key; the citation beside it tells them apart)."""
    return _DUPLICATE.sub("", symbol_id.split("::", 1)[-1])


def is_test(node: dict[str, Any]) -> bool:
    """A definition in a test file: the ``file_kind`` ingest stored on it. A node dict made by hand,
    without one, falls back on the folder and ``test_`` file-name conventions."""
    kind = node.get("file_kind")
    if kind is not None:
        return kind == "test"
    *folders, name = (node.get("path") or "").split("/")
    return bool(_TEST_FOLDERS.intersection(folders)) or name.startswith("test_")


# Folders whose code shows how to use a library rather than being it: examples, tutorials, the code
# a documentation site includes (FastAPI's docs_src), demos and samples.
EXAMPLE_FOLDERS = frozenset(
    {"examples", "example", "tutorial", "tutorials", "docs", "doc", "docs_src", "demo", "demos", "samples", "sample"}
)


def is_example(node: dict[str, Any]) -> bool:
    """A definition in example, tutorial or documentation code (by folder or an ``example_`` /
    ``tutorial`` file name), not the library it exercises."""
    *folders, name = (node.get("path") or "").split("/")
    return bool(EXAMPLE_FOLDERS.intersection(folders)) or name.startswith(("example", "tutorial"))


def is_test_function(node: dict[str, Any]) -> bool:
    return is_test(node) and (node.get("name") or "").startswith("test")


class SymbolLookupError(CgError, ValueError):
    """The reference names no definition, or more than one: the message says which."""


def _where(node: dict[str, Any]) -> str:
    return f"{node['qualname']} [{node['path']}:{node['start_line']}]"


def did_you_mean(ref: str, qualnames: list[str], count: int = 3) -> list[str]:
    """The names closest to a misspelled ``ref``, by difflib's ratio (the standard library's, as good as
    any for typos in identifiers): each qualified name is compared by its last parts, as many as ``ref``
    has (``PaymentService.charge_invoce`` against ``PaymentService.charge_invoice``), and shown as that
    suffix unless two definitions share it."""
    parts = ref.count(".") + 1
    by_suffix: dict[str, list[str]] = {}
    for name in qualnames:
        by_suffix.setdefault(".".join(name.split(".")[-parts:]), []).append(name)
    close = difflib.get_close_matches(ref, list(by_suffix), n=count, cutoff=0.75)
    return [suffix if len(by_suffix[suffix]) == 1 else by_suffix[suffix][0] for suffix in close]


def resolve_symbol(store: GraphReader, ref: str) -> dict[str, Any]:
    """The one definition ``ref`` names (see the module docstring); SymbolLookupError otherwise."""
    ref = ref.strip()
    located = _PATH_LINE.fullmatch(ref)
    if located and "::" not in ref:
        path, line = located["path"].removeprefix("./"), int(located["line"])
        around = store.symbols_at(path, line)
        around = [s for s in around if s["kind"] != "lambda"] or around
        if not around:
            raise SymbolLookupError(f"no definition at {path}:{line} (paths are relative to the repository root)")
        return around[0]
    matches = store.find_symbols(ref, limit=50)
    exact = [m for m in matches if ref in (m["id"], m["qualname"])]
    if exact:
        return exact[0]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        near = did_you_mean(ref, store.symbol_names())
        hint = f"; did you mean {' or '.join(near)}?" if near else " (try a qualified name, path:line or `cg search`)"
        raise SymbolLookupError(f"no definition matches {ref!r}{hint}")
    listed = "; ".join(_where(m) for m in matches[:_SHOWN])
    more = f"; and {len(matches) - _SHOWN} more" if len(matches) > _SHOWN else ""
    raise SymbolLookupError(
        f"{ref!r} is ambiguous, {len(matches)} definitions match: {listed}{more}; use a qualified name or path:line"
    )
