"""Definition chunks: one definition each, with a generated header that makes it self-contained.

The header carries what the seeds found a bare function lacks: where it lives (path), where it sits
(scope chain ``module shop.payments.retry > class RetryPolicy > method delay_for``) and what its
names refer to (only the imports whose bound name the body actually uses, not the file's whole
import block). The header is embedded with the code; the code itself is stored as written, so
citations and displays show the real source.
"""

from __future__ import annotations

import re
from dataclasses import replace

from cg.graph.model import FileExtraction, ImportRecord, Symbol
from cg.lexical import analyze_text

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def import_line(imp: ImportRecord) -> str:
    if imp.level == 0 and not imp.name:
        return f"import {imp.module}" + (f" as {imp.alias}" if imp.alias else "")
    source = "." * imp.level + imp.module
    return f"from {source} import {imp.name}" + (f" as {imp.alias}" if imp.alias else "")


def header_for(sym: Symbol, imports: list[ImportRecord]) -> str:
    used = set(_WORD.findall(sym.text))
    lines = [f"# file: {sym.path}", f"# scope: {' > '.join(_full_scope(sym))}"]
    if sym.kind != "module":
        wanted = [import_line(i) for i in imports if i.name != "*" and i.local_name in used]
        if wanted:
            lines.append("# uses: " + "; ".join(dict.fromkeys(wanted)))
    return "\n".join(lines)


def _full_scope(sym: Symbol) -> tuple[str, ...]:
    if sym.kind == "module":
        return sym.scope
    modname = sym.qualname.rsplit(".", len(sym.scope))[0]
    return (f"module {modname}", *sym.scope)


NAME_BOOST = 3


def search_text(sym: Symbol) -> str:
    """Lexical-arm text: the name (repeated, a poor man's field boost that works on every backend's
    BM25), the qualname and path, then signature, docstring and code. Without the boost a test that
    calls ``schedule_payment_retry`` five times outranks the function itself."""
    name = analyze_text(sym.name) if sym.kind != "module" else ""
    rest = analyze_text(" ".join((sym.qualname, sym.path, sym.signature, sym.docstring, sym.text)))
    return " ".join([name] * NAME_BOOST + [rest]).strip()


def chunk_symbols(ex: FileExtraction) -> list[Symbol]:
    """The file's symbols with their header and lexical text filled in."""
    return [replace(sym, header=header_for(sym, ex.imports), search_text=search_text(sym)) for sym in ex.symbols]
