from __future__ import annotations

import textwrap
from pathlib import Path

from cg.ingest.languages.python import PythonExtractor
from cg.ingest.walk import WalkReport, git_blob_sha, is_test_path, module_name, walk
from cg.model import FileExtraction, FileRecord

SHOP = Path(__file__).resolve().parents[2] / "examples" / "shop"
# A small payments module for repositories a test builds beside a hostile file.
PAYMENTS = '''"""Card payments."""


def charge_card(amount_cents: int) -> bool:
    """Charge the customer's card; False when it is declined."""
    return amount_cents < 100_000


def retry_charge(amount_cents: int, attempts: int = 3) -> bool:
    for _ in range(attempts):
        if charge_card(amount_cents):
            return True
    return False
'''


def extract_file(rel: str, root: Path = SHOP) -> FileExtraction:
    data = (root / rel).read_bytes()
    record = FileRecord(
        rel,
        "python",
        "test" if is_test_path(rel) else "source",
        git_blob_sha(data),
        data.count(b"\n"),
        module_name(rel),
    )
    return PythonExtractor().extract(record, data)


def extract_source(rel: str, source: str) -> FileExtraction:
    data = source.encode()
    record = FileRecord(rel, "python", "source", git_blob_sha(data), data.count(b"\n"), module_name(rel))
    return PythonExtractor().extract(record, data)


def extract_repo(root: Path = SHOP) -> list[FileExtraction]:
    return [extract_file(source.path, root) for source in walk(root, WalkReport())]


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """A repository under ``root`` made of ``files`` (path -> source, dedented)."""
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(text).lstrip(), "utf-8")
    return root


def indexed_tree(root: Path, files: dict[str, str], **settings: object) -> Path:
    """A repository under ``root`` made of ``files`` (path -> source, dedented), indexed with history
    off (and any other ``settings``, such as ``resolver="name"``)."""
    from cg.api import open_index

    write_tree(root, files)
    with open_index(root, read_only=False, create=True, history_commits=0, **settings) as writer:
        writer.index()
    return root
