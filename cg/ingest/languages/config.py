"""Files that are not code but that questions are about: YAML, TOML and JSON configuration,
Dockerfiles and SQL. Each is split by its own structure into ``config`` symbols: a top-level key or
TOML table, a Dockerfile build stage, a SQL statement, with the comment lines directly above it.

Why symbols and not a separate node type: a unit of configuration is searched, cited and chunked
exactly like a definition (``cg search STRIPE_WEBHOOK_SECRET`` should land on the ``payments:`` key
of ``config/settings.yaml`` with its line range), so it reuses the Symbol node, its full-text and
vector indexes, the chunker (fragments at nested keys or instructions) and the citation format, on
both stores, with no schema change. ``kind='config'`` under a File of kind ``config`` keeps it apart:
no CALLS or INHERITS edge ever starts from it, and queries can filter it out. The split is line
based (no YAML/TOML/JSON parser): line numbers stay exact, comments are kept, and a file that does
not parse still indexes.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from cg.ingest.languages.base import module_text
from cg.ingest.languages.registry import Language, ModuleSystem
from cg.model import FileExtraction, FileRecord, Symbol, symbol_id

_YAML_KEY = re.compile(r"""^(?:"([^"]+)"|'([^']+)'|([^\s#:'"{}\[\],&*!|>%@`-][^:#]*?))\s*:(?:\s|$)""")
_TOML_TABLE = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_TOML_KEY = re.compile(r"""^([A-Za-z0-9_.\-"']+)\s*=""")
_DOCKER_FROM = re.compile(r"^\s*FROM\s+(\S+)(?:\s+AS\s+(\S+))?", re.I)
_SQL_NAMED = re.compile(
    r"^\s*(create(?:\s+or\s+replace)?(?:\s+unique)?\s+(?:table|view|materialized\s+view|index|function|procedure|trigger"
    r"|type|sequence|schema|extension)(?:\s+if\s+not\s+exists)?|alter\s+table|insert\s+into|update|delete\s+from"
    r"|drop\s+\w+(?:\s+if\s+exists)?)\s+([\w.\"`]+)",
    re.I,
)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _yaml_units(lines: list[str]) -> list[tuple[int, str]]:
    units = []
    for row, line in enumerate(lines):
        if line[:1].isspace() or not line.strip() or line.startswith(("#", "---", "...")):
            continue
        match = _YAML_KEY.match(line)
        if match:
            units.append((row, next(g for g in match.groups() if g is not None).strip()))
    return units


def _toml_units(lines: list[str]) -> list[tuple[int, str]]:
    units = []
    in_table = False
    for row, line in enumerate(lines):
        table = _TOML_TABLE.match(line)
        if table:
            units.append((row, table.group(1).replace(" ", "")))
            in_table = True
        elif not in_table and not line[:1].isspace():
            key = _TOML_KEY.match(line)
            if key:
                units.append((row, key.group(1).strip("\"'")))
    return units


def _json_units(lines: list[str]) -> list[tuple[int, str]]:
    """Keys of the root object: a scan that tracks strings and nesting, so line numbers stay exact."""
    units: list[tuple[int, str]] = []
    depth = 0
    for row, line in enumerate(lines):
        i = 0
        while i < len(line):
            ch = line[i]
            if ch == '"':
                end = i + 1
                while end < len(line) and line[end] != '"':
                    end += 2 if line[end] == "\\" else 1
                if depth == 1 and line[end + 1 :].lstrip().startswith(":"):
                    units.append((row, line[i + 1 : end]))
                i = end + 1
                continue
            if ch in "{[":
                depth += 1
            elif ch in "}]":
                depth -= 1
            i += 1
    return units


def _dockerfile_units(lines: list[str]) -> list[tuple[int, str]]:
    units: list[tuple[int, str]] = []
    for row, line in enumerate(lines):
        match = _DOCKER_FROM.match(line)
        if match:
            units.append((row, match.group(2) or f"stage-{len(units) + 1}"))
    return units or ([(0, "dockerfile")] if lines else [])


def _sql_units(lines: list[str]) -> list[tuple[int, str]]:
    units: list[tuple[int, str]] = []
    start: int | None = None
    for row, line in enumerate(lines):
        stripped = line.strip()
        if start is None:
            if not stripped or stripped.startswith("--"):
                continue
            start = row
        if stripped.endswith(";") or row == len(lines) - 1:
            text = " ".join(lines[start : row + 1])
            match = _SQL_NAMED.match(text)
            if match:
                verb = " ".join(match.group(1).split()[:1]).lower()
                name = f"{match.group(2).strip(chr(34) + '`')}" if verb == "create" else f"{verb} {match.group(2)}"
            else:
                name = f"statement-{len(units) + 1}"
            units.append((start, name))
            start = None
    return units


# The line-comment marker of each format: what a unit's leading comment (its docstring) starts with.
COMMENTS = {"yaml": "#", "toml": "#", "json": "//", "dockerfile": "#", "sql": "--"}
UNITS: dict[str, Callable[[list[str]], list[tuple[int, str]]]] = {
    "yaml": _yaml_units,
    "toml": _toml_units,
    "json": _json_units,
    "dockerfile": _dockerfile_units,
    "sql": _sql_units,
}


def _split_points(lines: list[str], comment: str, head: int) -> tuple[tuple[int, int], ...]:
    """Nested keys, items and instructions after the unit's own first line (``head``), by
    indentation: the shallowest indentation is depth 1."""
    rows = [
        (i, _indent(line))
        for i, line in enumerate(lines)
        if i > head and line.strip() and not line.strip().startswith(comment)
    ]
    levels = sorted({indent for _, indent in rows})
    return tuple((i, min(levels.index(indent) + 1, 3)) for i, indent in rows)


class ConfigExtractor:
    """One extractor for every configuration format; ``record.language`` picks the splitter."""

    language = "config"

    def extract(self, record: FileRecord, source: bytes) -> FileExtraction:
        lines = source.decode("utf-8", "replace").splitlines()
        out = FileExtraction(file=record)
        comment = COMMENTS[record.language]
        units = [(row, name) for row, name in UNITS[record.language](lines) if name]
        module_id = symbol_id(record.path, "")
        seen: dict[str, int] = {}
        spans: dict[int, tuple[int, str]] = {}
        for index, (row, name) in enumerate(units):
            # up to the line before the next unit; keys sharing a line (minified JSON) end on it
            end = max(units[index + 1][0] - 1, row) if index + 1 < len(units) else len(lines) - 1
            while end > row and (not lines[end].strip() or lines[end].strip().startswith(comment)):
                end -= 1  # trailing blanks and the next unit's leading comment
            start = row
            while start > 0 and lines[start - 1].strip().startswith(comment):
                start -= 1
            if record.language == "json" and index + 1 == len(units):
                while end > row and lines[end].strip() in ("}", "},", "]"):
                    end -= 1
            doc = "\n".join(lines[i].strip()[len(comment) :].strip() for i in range(start, row))
            sid = symbol_id(record.path, name)
            seen[sid] = seen.get(sid, 0) + 1
            if seen[sid] > 1:
                sid = f"{sid}~{seen[sid]}"
            text_lines = lines[start : end + 1]
            signature = lines[row].strip()
            spans[start] = (end, signature)
            out.symbols.append(
                Symbol(
                    id=sid,
                    name=name,
                    qualname=f"{record.path}:{name}",
                    kind="config",
                    path=record.path,
                    start_line=start + 1,
                    end_line=end + 1,
                    signature=signature,
                    docstring=doc,
                    text="\n".join(text_lines),
                    parent_id=module_id,
                    scope=(f"{record.language} {name}",),
                    def_line=row + 1,
                    split_points=_split_points(text_lines, comment, row - start),
                )
            )
        text, points = module_text(lines, spans, set(), comment)
        out.symbols.insert(
            0,
            Symbol(
                id=module_id,
                name=record.path.rsplit("/", 1)[-1],
                qualname=record.path,
                kind="module",
                path=record.path,
                start_line=1,
                end_line=max(1, len(lines)),
                signature=f"{record.language} {record.path}",
                docstring="",
                text=text,
                parent_id="",
                scope=(f"module {record.path}",),
                split_points=points,
            ),
        )
        return out


def _config(name: str, extensions: tuple[str, ...], file_names: tuple[str, ...] = ()) -> Language:
    return Language(
        name=name,
        kind="config",
        extensions=extensions,
        file_names=file_names,
        shebangs=(),
        test_names="",
        comment=COMMENTS[name],
        import_line=None,
        builtins=frozenset(),
        extractor=ConfigExtractor,
        module_system=ModuleSystem.NONE,
    )


LANGUAGES = (
    _config("yaml", (".yaml", ".yml")),
    _config("toml", (".toml",)),
    _config("json", (".json",)),
    _config("sql", (".sql",)),
    _config("dockerfile", (".dockerfile",), ("Dockerfile", "Dockerfile.*")),
)
