"""The whole graph of a store's repository as plain, comparable sets: every node with its properties (vectors
left out) and every edge with its properties. Used to check that an incremental index equals a full
rebuild, across backends too."""

from __future__ import annotations

from typing import Any

import numpy as np

from cg.graph.cypher import VECTOR_PROPS
from cg.graph.store import SYMBOL_FIELDS

NODES = {
    "File": ("id", "language", "kind", "blob_sha", "loc", "module", "committed_at"),
    "Symbol": (*SYMBOL_FIELDS, "language", "file_kind", "blob_sha", "committed_at"),
    "Chunk": ("id", "owner_id", "kind", "path", "start_line", "end_line", "text", "search_text"),
    "External": ("id", "name", "resolved"),
    "Doc": ("id", "path", "title", "heading", "start_line", "end_line", "text", "search_text"),
    "Commit": ("id", "short", "author", "committed_at", "subject", "message", "files", "search_text"),
}
EDGES = {
    "DEFINES": ("line",),
    "IMPORTS": ("line", "resolved_by"),
    "CALLS": ("line", "resolved_by", "confidence", "candidates"),
    "INHERITS": ("line", "resolved_by"),
    "DECORATES": ("line", "resolved_by"),
    "PART_OF": (),
    "MENTIONS": (),
    "TOUCHES": (),
}


def dump(store) -> dict[str, set[tuple]]:
    out: dict[str, set[tuple]] = {}
    for label, props in NODES.items():
        cols = ", ".join(f"n.{p}" for p in props)
        rows = store._read(f"MATCH (n:{label}) WHERE n.repo = $repo RETURN {cols}")
        out[label] = {tuple(_norm(v) for v in row) for row in rows}
    for rel, props in EDGES.items():
        cols = "".join(f", r.{p}" for p in props)
        rows = store._read(f"MATCH (a)-[r:{rel}]->(b) WHERE a.repo = $repo RETURN a.id, b.id{cols}")
        out[rel] = {tuple(_norm(v) for v in row) for row in rows}
    return out


def _norm(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 6)
    return value


def differences(left: dict[str, set[tuple]], right: dict[str, set[tuple]], limit: int = 8) -> list[str]:
    """Readable differences: what only the left graph has, and what only the right has."""
    lines: list[str] = []
    for key in left:
        only_left = sorted(left[key] - right[key], key=repr)[:limit]
        only_right = sorted(right[key] - left[key], key=repr)[:limit]
        lines += [f"{key} only in incremental: {r!r}"[:400] for r in only_left]
        lines += [f"{key} only in full rebuild: {r!r}"[:400] for r in only_right]
    return lines


def vectors(store) -> dict[tuple[str, str], dict[str, np.ndarray]]:
    """Every stored vector, by (label, property) and node id."""
    out = {}
    for label, prop in VECTOR_PROPS:
        rows = store._read(f"MATCH (n:{label}) WHERE n.repo = $repo AND n.{prop} IS NOT NULL RETURN n.id")
        out[label, prop] = store.embeddings([r[0] for r in rows], label, prop) if rows else {}
    return out


def vector_differences(got, want) -> list[str]:
    """Where two stores' vectors differ: a property holding other nodes' vectors, or a vector that is not the same."""
    problems = []
    for key in want:
        if set(got[key]) != set(want[key]):
            problems.append(f"{key}: {len(got[key])} vectors, the reference stores {len(want[key])}")
            continue
        problems += [f"{key} {i}" for i in want[key] if not np.allclose(got[key][i], want[key][i], atol=1e-6)]
    return problems
