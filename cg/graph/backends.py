"""Open the configured store. The only place that knows which backends exist."""

from __future__ import annotations

from cg.config import ConfigError, Settings
from cg.graph.store import GraphStore, StoreError

KUZU_DIRNAME = "graph.kuzu"


def open_store(settings: Settings, read_only: bool = False, must_exist: bool = False) -> GraphStore:
    if settings.backend == "kuzu":
        from cg.graph.kuzu_store import KuzuStore

        path = settings.checked_index_dir(create=not (read_only or must_exist)) / KUZU_DIRNAME
        if path.is_symlink():
            raise StoreError(f"{path} is a symbolic link; cg opens only the index it built (remove it)")
        if (read_only or must_exist) and not path.exists():
            raise StoreError(f"no index in {settings.repo} (looked for .cg/{KUZU_DIRNAME}); run `cg index` first")
        return KuzuStore(path, read_only=read_only, repo_key=settings.repo_key)
    if settings.backend == "neo4j":
        try:
            from cg.graph.neo4j_store import Neo4jStore
        except ImportError as exc:
            raise ConfigError(f"the neo4j backend is not available: {exc}") from exc
        return Neo4jStore(settings, read_only=read_only)
    raise ConfigError(f"unknown backend {settings.backend!r}")
