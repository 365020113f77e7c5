"""The GraphStore protocol: the only thing the pipeline and the queries know about storage.

Both backends (Kùzu embedded, Neo4j over Bolt) implement it with the same schema, so a query is
written once in ``cg/queries`` and runs on either.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from cg.graph.model import Chunk, Edge, External, FileRecord, Symbol

NODE_LABELS = ("File", "Symbol", "External")
SYMBOL_FIELDS = (
    "id",
    "name",
    "qualname",
    "kind",
    "path",
    "start_line",
    "end_line",
    "signature",
    "docstring",
    "text",
    "header",
    "search_text",
    "parent_id",
)
CHUNK_FIELDS = ("id", "owner_id", "kind", "path", "start_line", "end_line", "text", "search_text")
# The fields a query needs to describe a hit without pulling the code itself.
SUMMARY_FIELDS = (
    "id",
    "name",
    "qualname",
    "kind",
    "path",
    "start_line",
    "end_line",
    "signature",
    "docstring",
)


def edge_row(e: Edge) -> dict[str, Any]:
    """One edge as a Cypher parameter map (both stores write the same properties)."""
    return {
        "src": e.src,
        "dst": e.dst,
        "line": e.line,
        "resolved_by": e.resolved_by,
        "confidence": e.confidence,
        "candidates": e.candidates,
    }


class StoreError(RuntimeError):
    """A storage failure a user can act on (server down, bad Cypher): a one-line message."""


@dataclass
class FileWrite:
    """One file's nodes, ready to store; embeddings line up with ``symbols``."""

    file: FileRecord
    symbols: list[Symbol]
    embeddings: np.ndarray
    externals: list[External] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)
    chunk_embeddings: np.ndarray | None = None
    doc_embeddings: list[np.ndarray | None] | None = None  # per symbol; None where it has no docstring

    def symbol_rows(self) -> list[dict[str, Any]]:
        """One parameter map per symbol (SYMBOL_FIELDS, the embedding and the docstring's embedding)."""
        docs = self.doc_embeddings or [None] * len(self.symbols)
        return [
            {
                **{f: getattr(s, f) for f in SYMBOL_FIELDS},
                "embedding": [float(x) for x in vec],
                "doc_embedding": [float(x) for x in doc] if doc is not None else None,
            }
            for s, vec, doc in zip(self.symbols, self.embeddings, docs, strict=True)
        ]

    def chunk_rows(self) -> list[dict[str, Any]]:
        vectors = self.chunk_embeddings if self.chunk_embeddings is not None else [None] * len(self.chunks)
        return [
            {**{f: getattr(c, f) for f in CHUNK_FIELDS}, "embedding": [float(x) for x in vec]}
            for c, vec in zip(self.chunks, vectors, strict=True)
        ]


@dataclass(frozen=True)
class CallRow:
    """One CALLS edge seen from a node: ``other`` is the caller (direction 'in') or callee ('out')."""

    src: str
    dst: str
    line: int
    resolved_by: str
    other: dict[str, Any]  # SUMMARY_FIELDS of the other end; External ends carry id/name and kind
    other_label: str


class GraphStore(Protocol):
    backend: str

    def ensure_schema(self, dimension: int) -> None: ...
    def reset(self) -> None: ...
    def get_meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str) -> None: ...

    def write_file(self, write: FileWrite) -> None:
        """Upsert the file and its symbols; drop its symbols that are gone and every edge leaving
        the file or its symbols (the caller then writes the fresh edges)."""

    def write_edges(self, edges: list[Edge]) -> None: ...
    def delete_files(self, paths: list[str]) -> None: ...
    def file_shas(self) -> dict[str, str]: ...

    def fulltext(self, analyzed_query: str, limit: int, label: str = "Symbol") -> list[tuple[str, float]]:
        """Candidates from the full-text index of ``label`` (Symbol or Chunk)."""

    def vector(
        self, embedding: np.ndarray, limit: int, label: str = "Symbol", prop: str = "embedding"
    ) -> list[tuple[str, float]]:
        """Candidates by cosine over ``label.prop`` (Symbol.embedding, Symbol.doc_embedding, Chunk.embedding)."""

    def chunk_owners(self, ids: list[str]) -> dict[str, str]:
        """Chunk id -> the symbol it belongs to."""

    def symbols(self, ids: list[str], with_text: bool = True) -> dict[str, dict[str, Any]]: ...
    def lexical_docs(self, ids: list[str], label: str = "Symbol") -> dict[str, str]:
        """The analyzed ``search_text`` of these nodes (for backend-independent BM25 ranking)."""

    def embeddings(self, ids: list[str], label: str = "Symbol", prop: str = "embedding") -> dict[str, np.ndarray]:
        """Stored vectors of these nodes, float32 (for exact re-scoring of vector candidates)."""

    def find_symbols(self, ref: str, limit: int = 10) -> list[dict[str, Any]]: ...
    def calls(self, ids: list[str], direction: str) -> list[CallRow]: ...
    def cypher(
        self, query: str, params: dict[str, Any] | None = None, write: bool = False
    ) -> tuple[list[str], list[list[Any]]]: ...
    def stats(self) -> dict[str, int]: ...
    def close(self) -> None: ...
