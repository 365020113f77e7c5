"""READMEs, markdown and reStructuredText split at their headings into ``DocSection`` records, and the
symbols each section names (``MENTIONS``).

Why headings: a section is the unit a writer made about one thing ("Retries and backoff"), so it is
the unit a question about that thing should land on, and its heading chain is the best one-line
summary of it (it goes in front of the embedded text). A section longer than ``max_chars`` is cut at
paragraph breaks into numbered parts so no part falls outside the embedding model's window. Headings
inside fenced code blocks are code, not structure.

Mentions are deliberately conservative, because a wrong MENTIONS edge sends a reader to the wrong
code: a dotted name must end a symbol's qualified name (``RetryPolicy.delay_for``), a bare name must
look like an identifier (``snake_case``, ``CamelCase`` or written in a code span) and name exactly one
definition, or at most three when written in a code span.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from cg.ingest.languages.registry import Language, ModuleSystem
from cg.lexical import analyze_text
from cg.model import DocSection, Symbol

_ATX = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+:.])\1{2,}\s*$")
_CODE_SPAN = re.compile(r"``?([^`\n]+?)``?")
_DOTTED = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+\b")
_IDENT = re.compile(r"\b(?:[a-z0-9]+_[a-z0-9_]+|_[A-Za-z0-9_]+|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*)\b")


def _headings(lines: list[str], language: str) -> list[tuple[int, int, str]]:
    """(0-based line, level, title) of every heading outside code blocks."""
    found: list[tuple[int, int, str]] = []
    fenced = False
    rst_levels: dict[str, int] = {}
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        if language == "markdown":
            m = _ATX.match(line)
            if m and m.group(2):
                found.append((i, len(m.group(1)), m.group(2)))
            elif i > 0 and lines[i - 1].strip() and re.match(r"^(=+|-+)\s*$", line) and not _ATX.match(lines[i - 1]):
                if found and found[-1][0] == i - 1:
                    continue
                found.append((i - 1, 1 if line.lstrip().startswith("=") else 2, lines[i - 1].strip()))
        elif language == "rst":
            m = _RST_UNDERLINE.match(line)
            title = lines[i - 1].strip() if i > 0 else ""
            if m and title and not _RST_UNDERLINE.match(lines[i - 1]) and len(line.rstrip()) >= len(title):
                level = rst_levels.setdefault(m.group(1), len(rst_levels) + 1)
                found.append((i - 1, level, title))
    return found


def split_document(path: str, text: str, language: str, max_chars: int = 2000) -> list[DocSection]:
    """The file's sections in order: a preamble before the first heading (titled by the file name),
    then one per heading, each up to the next heading of any level."""
    lines = text.splitlines()
    if not any(line.strip() for line in lines):
        return []
    heads = _headings(lines, language)
    starts = [(0, 0, path.rsplit("/", 1)[-1])] if not heads or heads[0][0] > 0 else []
    starts += heads
    sections: list[DocSection] = []
    seen: dict[str, int] = defaultdict(int)
    chain: list[tuple[int, str]] = []
    for n, (start, level, title) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(lines)
        while chain and (chain[-1][0] >= level or chain[-1][0] == 0):  # the preamble heads nothing
            chain.pop()
        chain.append((level, title))
        heading_path = tuple(t for _, t in chain)
        body = lines[start:end]
        if not any(line.strip() for line in body):
            continue
        for part, (offset, piece) in enumerate(_parts(body, max_chars), 1):
            key = " > ".join(heading_path) + (f" (part {part})" if part > 1 else "")
            seen[key] += 1
            ident = f"{path}::{key}" + (f"~{seen[key]}" if seen[key] > 1 else "")
            piece_text = "\n".join(piece).strip("\n")
            sections.append(
                DocSection(
                    id=ident,
                    path=path,
                    title=title,
                    heading_path=heading_path,
                    start_line=start + offset + 1,
                    end_line=start + offset + len(piece),
                    text=piece_text,
                    search_text=analyze_text(" ".join(heading_path) + "\n" + piece_text),
                )
            )
    return sections


def _parts(body: list[str], max_chars: int) -> Iterable[tuple[int, list[str]]]:
    """Cut at blank lines (outside code fences) once a part passes ``max_chars``."""
    part: list[str] = []
    first = 0
    size = 0
    fenced = False
    for i, line in enumerate(body):
        if _FENCE.match(line):
            fenced = not fenced
        if not line.strip() and not fenced and size >= max_chars:
            yield first, part
            part, first, size = [], i + 1, 0
            continue
        part.append(line)
        size += len(line) + 1
    if any(line.strip() for line in part):
        yield first, part


def mentionable(symbols: Iterable[Symbol]) -> list[tuple[str, str, str]]:
    """(id, name, qualname) of the symbols a document can mention, all that ``MentionIndex`` reads of
    them: when a run leaves these unchanged and rewrites no document, every mention stays as it was."""
    # a module is named by its path, and a lambda has no name a document could write
    return [(s.id, s.name, s.qualname) for s in symbols if s.kind != "module" and s.retrievable]


class MentionIndex:
    """Symbol lookup for the names a document writes."""

    def __init__(self, symbols: Iterable[Symbol]) -> None:
        self.by_name: dict[str, list[str]] = defaultdict(list)
        self.qualname: dict[str, str] = {}
        for sid, name, qualname in mentionable(symbols):
            self.by_name[name].append(sid)
            self.qualname[sid] = qualname

    def _suffix(self, dotted: str) -> list[str]:
        tail = "." + dotted
        candidates = self.by_name.get(dotted.rsplit(".", 1)[-1], ())
        return sorted(i for i in candidates if self.qualname[i] == dotted or self.qualname[i].endswith(tail))

    def mentions(self, text: str) -> list[str]:
        found: set[str] = set()
        spans = {m.group(1).strip() for m in _CODE_SPAN.finditer(text)}
        for span in spans:
            name = span.split("(")[0].strip()
            if "." in name:
                hits = self._suffix(name)
                if 0 < len(hits) <= 3:
                    found.update(hits)
            elif 0 < len(self.by_name.get(name, ())) <= 3:
                found.update(self.by_name[name])
        for m in _DOTTED.finditer(text):
            hits = self._suffix(m.group(0))
            if len(hits) == 1:
                found.update(hits)
        for m in _IDENT.finditer(text):
            ids = self.by_name.get(m.group(0), ())
            if len(ids) == 1:
                found.update(ids)
        return sorted(found)


def _document(name: str, extensions: tuple[str, ...]) -> Language:
    return Language(
        name=name,
        kind="docs",
        extensions=extensions,
        file_names=(),
        shebangs=(),
        test_names="",
        comment="",
        import_line=None,
        builtins=frozenset(),
        extractor=None,  # split at headings by split_document, not parsed
        module_system=ModuleSystem.NONE,
    )


LANGUAGES = (_document("markdown", (".md", ".markdown")), _document("rst", (".rst",)))
