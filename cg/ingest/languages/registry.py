"""Every fact about a language in one record, and the registry of them.

Each language module declares ``LANGUAGE = Language(...)`` (or ``LANGUAGES``, a module holding
several: the config formats, the document formats); ``MODULES`` below names those modules, one line
each. The walk, the chunker, the resolvers and the pipeline ask the registry what a file's language
says (its extensions, test files, comment marker, import syntax, builtins, how its imports and
packages work) instead of comparing its name. Adding a language is one module and one line here.

The modules are imported on first use, not when this one is: each one loads its tree-sitter grammar.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from fnmatch import fnmatchcase
from functools import cache
from typing import Literal, Protocol

from cg.model import FileExtraction, FileRecord, ImportRecord

MODULES = (
    "cg.ingest.languages.python",
    "cg.ingest.languages.typescript",
    "cg.ingest.languages.javascript",
    "cg.ingest.languages.go",
    "cg.ingest.languages.java",
    "cg.ingest.languages.rust",
    "cg.ingest.languages.config",  # yaml, toml, json, sql, dockerfile
    "cg.ingest.docs",  # markdown, rst
)

Kind = Literal["code", "config", "docs"]  # what a file of the language is: FileRecord.kind follows from it


class Extractor(Protocol):
    def extract(self, record: FileRecord, source: bytes) -> FileExtraction: ...


class ModuleSystem(StrEnum):
    """How a language's imports name other files of the repository: the generic resolver implements
    each system once, and a language picks the one its imports follow."""

    NONE = ""  # no imports (config and document formats)
    PYTHON = "python"  # dotted modules: jedi, then the Python resolver (cg/ingest/resolve/python.py)
    ES = "es"  # ES specifiers: relative paths and tsconfig/jsconfig `paths`
    GO = "go"  # import paths under go.mod's module path name package directories
    PACKAGES = "packages"  # dotted packages spread over files; an import names a type or a package.*
    CRATES = "crates"  # `use` paths through crate::, self::, super:: and the module tree of the files


@dataclass(frozen=True)
class Language:
    """What the walk, the chunker and the resolvers need to know about one language."""

    name: str  # FileRecord.language
    kind: Kind
    extensions: tuple[str, ...]  # lower case, with the dot
    file_names: tuple[str, ...]  # fnmatch patterns on a file's own name, case-sensitive: "Dockerfile.*"
    shebangs: tuple[str, ...]  # interpreters named on a `#!` line (a trailing version is ignored: python3.11)
    test_names: str  # regex searched in a file's name that marks a test file ("" : folders only, tests/)
    comment: str  # line-comment marker for generated lines (doc lines, fragment markers); "" for docs
    import_line: Callable[[ImportRecord], str] | None  # an import as the language writes it (header "uses:")
    builtins: frozenset[str]  # names a call may use without an import: an External, never an in-repo guess
    extractor: Callable[[], Extractor] | None  # builds the file parser (None: documents are split, not parsed)
    module_system: ModuleSystem
    # FileRecord.module from a path, when the path alone gives it (Python); else the extractor sets it
    file_module: Callable[[str], str] | None = None
    # Python style: a block opens with ":" and a docstring is a string literal (else braces and comments)
    indented_blocks: bool = False
    # (path, FileRecord.module) -> the namespace names are shared across files in (a Go directory, a Java
    # package, a Rust crate); None: each file is its own (TypeScript, JavaScript)
    package: Callable[[str, str], str] | None = None
    package_scope: bool = False  # a top-level name is in scope in every file of its package, unimported
    module_path: Callable[[str], list[str]] | None = None  # CRATES: a file's module path below its crate root
    implicit_this: bool = False  # members of the enclosing class are in scope without `this.` (Java)
    implicit_interfaces: bool = False  # a type satisfies every interface whose methods it has (Go)


@dataclass(frozen=True)
class _Table:
    """The registry's lookups, built once per set of languages."""

    languages: tuple[Language, ...]
    by_name: dict[str, Language] = field(default_factory=dict)
    by_extension: dict[str, Language] = field(default_factory=dict)
    by_shebang: dict[str, Language] = field(default_factory=dict)
    test_name: re.Pattern[str] | None = None


_extra: list[Language] = []  # registered at run time (tests, plugins), after the modules' own


@cache
def _declared() -> tuple[Language, ...]:
    out: list[Language] = []
    for name in MODULES:
        module = importlib.import_module(name)
        out.extend(getattr(module, "LANGUAGES", None) or (module.LANGUAGE,))
    return tuple(out)


_table: _Table | None = None


def _current() -> _Table:
    global _table
    if _table is None:
        found = (*_declared(), *_extra)
        patterns = [f"(?:{lang.test_names})" for lang in found if lang.test_names]
        _table = _Table(
            found,
            {lang.name: lang for lang in found},
            {ext: lang for lang in found for ext in lang.extensions},
            {interpreter: lang for lang in found for interpreter in lang.shebangs},
            re.compile("|".join(patterns)) if patterns else None,
        )
    return _table


def register(language: Language) -> None:
    """Add a language at run time (a test's toy language, say); its name, extensions and shebangs win."""
    global _table
    unregister(language.name)
    _extra.append(language)
    _table = None


def unregister(name: str) -> None:
    """Take back a language ``register`` added."""
    global _table
    _extra[:] = [lang for lang in _extra if lang.name != name]
    _table = None


def languages() -> tuple[Language, ...]:
    return _current().languages


def language_named(name: str) -> Language | None:
    return _current().by_name.get(name)


def languages_of_kind(kind: Kind) -> frozenset[str]:
    return frozenset(lang.name for lang in languages() if lang.kind == kind)


def language_of_file(name: str, suffix: str) -> Language | None:
    """The language a file's name gives: its (lower-cased) extension, else a file-name pattern."""
    table = _current()
    found = table.by_extension.get(suffix.lower())
    if found is not None:
        return found
    return next((lang for lang in table.languages if any(fnmatchcase(name, p) for p in lang.file_names)), None)


def language_of_interpreter(interpreter: str) -> Language | None:
    """The language of a `#!` line's interpreter: ``python3.11`` is ``python3``, then ``python``."""
    table = _current()
    return table.by_shebang.get(interpreter) or table.by_shebang.get(re.sub(r"[0-9.]+$", "", interpreter))


def is_test_name(name: str) -> bool:
    """Whether a file's own name marks it as a test in any language (``test_x.py``, ``x_test.go``)."""
    pattern = _current().test_name
    return pattern is not None and pattern.search(name) is not None


def file_module(language: str, path: str) -> str:
    """FileRecord.module when the path alone gives it (Python), else "" (the extractor sets it)."""
    found = language_named(language)
    return found.file_module(path) if found is not None and found.file_module is not None else ""


def resolved_by_python(language: str) -> bool:
    """Whether files of ``language`` go to jedi and the Python resolver (else the generic resolver)."""
    found = language_named(language)
    return found is not None and found.module_system is ModuleSystem.PYTHON
