from __future__ import annotations

from pathlib import Path

from cg.ingest.languages.python import PythonExtractor
from cg.ingest.walk import WalkReport, git_blob_sha, is_test_path, module_name, walk
from cg.model import FileExtraction, FileRecord

SHOP = Path(__file__).resolve().parents[2] / "examples" / "shop"


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
