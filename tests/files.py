"""Writing a small repository from a mapping of paths to texts, for tests that build one inline."""

from __future__ import annotations

from pathlib import Path


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Each repository-relative path of ``files`` written under ``root`` (folders made); ``root``."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root
