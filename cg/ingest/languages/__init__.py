"""One extractor per language; ``extractor_for`` picks it by ``FileRecord.language``."""

from __future__ import annotations

from typing import Protocol

from cg.graph.model import FileExtraction, FileRecord


class Extractor(Protocol):
    def extract(self, record: FileRecord, source: bytes) -> FileExtraction: ...


class Extractors:
    """Extractors built on first use (each owns a tree-sitter parser), shared by every file of a run."""

    def __init__(self) -> None:
        self._built: dict[str, Extractor] = {}

    def get(self, language: str) -> Extractor:
        if language not in self._built:
            self._built[language] = _build(language)
        return self._built[language]


def _build(language: str) -> Extractor:
    if language == "python":
        from cg.ingest.languages.python import PythonExtractor

        return PythonExtractor()
    if language == "typescript":
        from cg.ingest.languages.typescript import TypeScriptExtractor

        return TypeScriptExtractor()
    if language == "javascript":
        from cg.ingest.languages.javascript import JavaScriptExtractor

        return JavaScriptExtractor()
    if language == "go":
        from cg.ingest.languages.go import GoExtractor

        return GoExtractor()
    if language == "java":
        from cg.ingest.languages.java import JavaExtractor

        return JavaExtractor()
    if language == "rust":
        from cg.ingest.languages.rust import RustExtractor

        return RustExtractor()
    from cg.ingest.languages.config import UNITS, ConfigExtractor

    if language in UNITS:
        return ConfigExtractor()
    raise ValueError(f"no extractor for language {language!r}")
