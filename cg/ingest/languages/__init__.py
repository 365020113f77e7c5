"""One extractor per language; ``Extractors.get`` picks it by ``FileRecord.language``."""

from __future__ import annotations

import importlib
from typing import Protocol

from cg.model import FileExtraction, FileRecord

# The comment marker of each language, for generated lines (markers, doc lines); "//" otherwise.
COMMENT_MARKERS = {"python": "#", "yaml": "#", "toml": "#", "dockerfile": "#", "sql": "--"}


def comment_marker(language: str) -> str:
    return COMMENT_MARKERS.get(language, "//")


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


# language -> (module, class); every config format shares one extractor
_EXTRACTORS = {
    "python": ("cg.ingest.languages.python", "PythonExtractor"),
    "typescript": ("cg.ingest.languages.typescript", "TypeScriptExtractor"),
    "javascript": ("cg.ingest.languages.javascript", "JavaScriptExtractor"),
    "go": ("cg.ingest.languages.go", "GoExtractor"),
    "java": ("cg.ingest.languages.java", "JavaExtractor"),
    "rust": ("cg.ingest.languages.rust", "RustExtractor"),
}


def _build(language: str) -> Extractor:
    from cg.ingest.languages.config import UNITS, ConfigExtractor

    if language in UNITS:
        return ConfigExtractor()
    if language not in _EXTRACTORS:
        raise ValueError(f"no extractor for language {language!r}")
    module, name = _EXTRACTORS[language]
    return getattr(importlib.import_module(module), name)()
