"""The language registry: every language declares every fact, and a language added in a test (a toy
Kotlin-like one defined below) is walked, classified, parsed, chunked and resolved with no edit
outside this module."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import fields
from pathlib import Path

import pytest

from cg.config import load_settings
from cg.ingest.chunk import chunk_file
from cg.ingest.languages import Extractors
from cg.ingest.languages.registry import Language, ModuleSystem, language_named, languages, register, unregister
from cg.ingest.pipeline import extract_repository, resolve_extractions
from cg.ingest.walk import WalkReport, file_kind, is_test_path, walk
from cg.model import CallSite, FileExtraction, FileRecord, ImportRecord, Symbol, symbol_id

KINDS = ("code", "config", "docs")


# What each field must hold; a new field of Language without a rule here fails the test below.
RULES: dict[str, Callable[[Language], bool]] = {
    "name": lambda lang: bool(re.fullmatch(r"[a-z][a-z0-9_]*", lang.name)),
    "kind": lambda lang: lang.kind in KINDS,
    "extensions": lambda lang: all(re.fullmatch(r"\.[a-z0-9.]+", e) for e in lang.extensions),
    "file_names": lambda lang: all(isinstance(n, str) and n for n in lang.file_names),
    "shebangs": lambda lang: (
        all(re.fullmatch(r"[\w.+-]+", s) for s in lang.shebangs) and (lang.kind == "code" or not lang.shebangs)
    ),
    "test_names": lambda lang: re.compile(lang.test_names) is not None and (lang.kind == "code" or not lang.test_names),
    "comment": lambda lang: bool(lang.comment) if lang.kind != "docs" else lang.comment == "",
    "import_line": lambda lang: callable(lang.import_line) if lang.kind == "code" else lang.import_line is None,
    "builtins": lambda lang: bool(lang.builtins) if lang.kind == "code" else not lang.builtins,
    "extractor": lambda lang: callable(lang.extractor) if lang.kind != "docs" else lang.extractor is None,
    "module_system": lambda lang: (lang.module_system is not ModuleSystem.NONE) == (lang.kind == "code"),
    "file_module": lambda lang: lang.file_module is None or callable(lang.file_module),
    "indented_blocks": lambda lang: isinstance(lang.indented_blocks, bool),
    "package": lambda lang: lang.package is None or (callable(lang.package) and lang.kind == "code"),
    "package_scope": lambda lang: (
        isinstance(lang.package_scope, bool) and (not lang.package_scope or lang.package is not None)
    ),
    "module_path": lambda lang: lang.module_path is None or callable(lang.module_path),
    "implicit_this": lambda lang: isinstance(lang.implicit_this, bool),
    "implicit_interfaces": lambda lang: isinstance(lang.implicit_interfaces, bool),
}


def test_every_language_declares_every_field():
    assert set(RULES) == {f.name for f in fields(Language)}, "a Language field without a rule in RULES"
    found = languages()
    names = [lang.name for lang in found]
    assert len(names) == len(set(names))
    expected_code = {"python", "typescript", "javascript", "go", "java", "rust"}
    assert {lang.name for lang in found if lang.kind == "code"} == expected_code
    assert {lang.name for lang in found if lang.kind == "config"} == {"yaml", "toml", "json", "sql", "dockerfile"}
    assert {lang.name for lang in found if lang.kind == "docs"} == {"markdown", "rst"}
    for lang in found:
        broken = [name for name, rule in RULES.items() if not rule(lang)]
        assert not broken, f"{lang.name}: {broken}"
        assert lang.extensions or lang.file_names, f"{lang.name}: no way to recognise its files"
        assert language_named(lang.name) is lang


def test_extensions_shebangs_and_file_names_are_unique_across_languages():
    for facet in ("extensions", "shebangs", "file_names"):
        owners: dict[str, str] = {}
        for lang in languages():
            for value in getattr(lang, facet):
                assert value not in owners, f"{facet} {value!r}: {owners.get(value)} and {lang.name}"
                owners[value] = lang.name


def test_every_extractor_builds():
    extractors = Extractors()
    for lang in languages():
        if lang.extractor is not None:
            assert hasattr(extractors.get(lang.name), "extract")


# -- a toy language, registered here and nowhere else ----------------------------------------------
_IMPORT = re.compile(r"^import\s+([\w.]+)\.(\w+)\s*$")
_PACKAGE = re.compile(r"^package\s+([\w.]+)\s*$")
_FUN = re.compile(r"^fun\s+(\w+)\s*\(")
_CALL = re.compile(r"\b(\w+)\(")


class KotlinishExtractor:
    """Top-level ``fun`` definitions (each up to its closing ``}`` in column 0, with the ``//`` lines
    above it as its docstring), ``package`` and ``import`` lines and bare calls, all line based."""

    def extract(self, record: FileRecord, source: bytes) -> FileExtraction:
        lines = source.decode().splitlines()
        package = next((m.group(1) for line in lines if (m := _PACKAGE.match(line))), "")
        record = FileRecord(record.path, record.language, record.kind, record.blob_sha, record.loc, package)
        out = FileExtraction(file=record)
        module_id = symbol_id(record.path, "")
        out.symbols.append(
            Symbol(module_id, record.path, package, "module", record.path, 1, len(lines), "", "", source.decode(), "")
        )
        for row, line in enumerate(lines):
            if m := _IMPORT.match(line):
                out.imports.append(ImportRecord(m.group(1), m.group(2), "", 0, row + 1))
            if not (m := _FUN.match(line)):
                continue
            end = next(i for i in range(row, len(lines)) if lines[i] == "}")
            start = row
            while start > 0 and lines[start - 1].startswith("//"):
                start -= 1
            name = m.group(1)
            sym = Symbol(
                id=symbol_id(record.path, name),
                name=name,
                qualname=f"{package}.{name}",
                kind="function",
                path=record.path,
                start_line=start + 1,
                end_line=end + 1,
                signature=line.rstrip(" {"),
                docstring="\n".join(lines[i][2:].strip() for i in range(start, row)),
                text="\n".join(lines[start : end + 1]),
                parent_id=module_id,
                scope=(f"function {name}",),
                def_line=row + 1,
                split_points=tuple((i - start, 1) for i in range(row + 1, end)),
            )
            out.symbols.append(sym)
            for i in range(row + 1, end):
                out.calls.extend(
                    CallSite(sym.id, call.group(1), i + 1, column=call.start(1)) for call in _CALL.finditer(lines[i])
                )
        return out


KOTLINISH = Language(
    name="kotlinish",
    kind="code",
    extensions=(".kt",),
    file_names=(),
    shebangs=("kotlin",),
    test_names=r"Test\.kt$",
    comment="//",
    import_line=lambda imp: f"import {imp.module}.{imp.name}",
    builtins=frozenset({"println", "require"}),
    extractor=KotlinishExtractor,
    module_system=ModuleSystem.PACKAGES,
    package=lambda path, module: module,
    package_scope=True,
)

INVOICES = """package shop.billing

import shop.payments.Gateway

// Charges one invoice through the gateway.
fun chargeInvoice(total: Int) {
    val gateway = Gateway()
    println("charging")
    require(total > 0)
    gateway.charge(total)
}
"""
REMINDERS = """package shop.billing

fun sendReminder(total: Int) {
    chargeInvoice(total)
}
"""
INVOICES_TEST = """package shop.billing

fun chargesOnce() {
    chargeInvoice(12)
}
"""


@pytest.fixture
def kotlinish(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "billing").mkdir()
    (tmp_path / "billing" / "Invoices.kt").write_text(INVOICES)
    (tmp_path / "billing" / "Reminders.kt").write_text(REMINDERS)
    (tmp_path / "billing" / "InvoicesTest.kt").write_text(INVOICES_TEST)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "settle").write_text("#!/usr/bin/env kotlin\n" + REMINDERS.replace("sendReminder", "settle"))
    register(KOTLINISH)
    try:
        yield tmp_path
    finally:
        unregister(KOTLINISH.name)


def test_a_registered_language_is_walked_and_classified(kotlinish: Path):
    found = {s.path: s.language for s in walk(kotlinish, WalkReport())}
    assert found == {
        "bin/settle": "kotlinish",
        "billing/Invoices.kt": "kotlinish",
        "billing/InvoicesTest.kt": "kotlinish",
        "billing/Reminders.kt": "kotlinish",
    }
    assert is_test_path("billing/InvoicesTest.kt") and not is_test_path("billing/Invoices.kt")
    assert file_kind("billing/InvoicesTest.kt", "kotlinish") == "test"
    assert file_kind("billing/Invoices.kt", "kotlinish") == "source"


def test_a_registered_language_is_chunked_in_its_own_syntax(kotlinish: Path):
    data = (kotlinish / "billing" / "Invoices.kt").read_bytes()
    record = FileRecord("billing/Invoices.kt", "kotlinish", "source", "", data.count(b"\n"))
    ex = Extractors().get("kotlinish").extract(record, data)
    chunked = chunk_file(ex, budget=40)
    charge = next(s for s in chunked.symbols if s.name == "chargeInvoice")
    assert "# uses: import shop.payments.Gateway" in charge.header
    fragments = [c for c in chunked.chunks if c.kind == "fragment"]
    assert fragments and all("    // ... (fragment " in c.text for c in fragments)
    assert all("fun chargeInvoice(total: Int) {\n    // Charges one invoice" in c.text for c in fragments)


def test_a_registered_language_is_indexed_and_resolved(kotlinish: Path):
    settings = load_settings(kotlinish)
    extractions, _ = extract_repository(settings)
    assert {ex.file.path for ex in extractions} == {
        "bin/settle",
        "billing/Invoices.kt",
        "billing/InvoicesTest.kt",
        "billing/Reminders.kt",
    }
    edges, _ = resolve_extractions(settings, extractions)
    calls = {(e.src.split("::")[1], e.dst, e.resolved_by) for e in edges if e.type == "CALLS"}
    invoices = "billing/Invoices.kt::chargeInvoice"
    assert ("sendReminder", invoices, "name") in calls  # same package, no import: the package hook
    assert ("chargesOnce", invoices, "name") in calls
    assert ("chargeInvoice", "println", "name") in calls  # a builtin the language declares
    assert ("chargeInvoice", "shop.payments.Gateway", "import") in calls


def test_unregister_restores_the_registry(kotlinish: Path):
    unregister(KOTLINISH.name)
    assert language_named("kotlinish") is None
    assert not is_test_path("billing/InvoicesTest.kt")
    assert [s.path for s in walk(kotlinish, WalkReport())] == []
    register(KOTLINISH)  # the fixture unregisters it again
