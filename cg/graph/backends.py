"""Open the configured store. The only place that knows which backends exist."""

from __future__ import annotations

from cg.config import ConfigError, Settings
from cg.graph.store import GraphStore


def open_store(settings: Settings, read_only: bool = False, must_exist: bool = False) -> GraphStore:
    """A reader (``read_only``) or a writer; with ``must_exist`` a missing index is a StoreError. A
    Kùzu writer waits up to ``index_lock_wait`` seconds for another writer of the same repository."""
    if settings.backend == "kuzu":
        from cg.graph.generations import Generations, NoCompleteIndex
        from cg.graph.kuzu_store import KuzuIndexStore

        generations = Generations(settings.checked_index_dir(create=not (read_only or must_exist)))
        if must_exist and not read_only and generations.current() is None:
            raise NoCompleteIndex(generations.missing_reason())
        return KuzuIndexStore(
            generations,
            settings.repo_key,
            read_only=read_only,
            lock_wait=settings.index_lock_wait,
            compact_growth=settings.kuzu_compact_growth,
        )
    if settings.backend == "neo4j":
        try:
            from cg.graph.neo4j_store import Neo4jStore
        except ImportError as exc:
            raise ConfigError(f"the neo4j backend is not available: {exc}") from exc
        return Neo4jStore(settings, read_only=read_only)
    raise ConfigError(f"unknown backend {settings.backend!r}")
