"""One extractor per language; ``Extractors.get`` builds the one ``FileRecord.language`` names, as its
entry in the registry (cg/ingest/languages/registry.py) says."""

from __future__ import annotations

from cg.ingest.languages.registry import Extractor, language_named

__all__ = ["Extractor", "Extractors"]


class Extractors:
    """Extractors built on first use (each owns a tree-sitter parser), shared by every file of a run."""

    def __init__(self) -> None:
        self._built: dict[str, Extractor] = {}

    def get(self, language: str) -> Extractor:
        if language not in self._built:
            found = language_named(language)
            if found is None or found.extractor is None:
                raise ValueError(f"no extractor for language {language!r}")
            self._built[language] = found.extractor()
        return self._built[language]
