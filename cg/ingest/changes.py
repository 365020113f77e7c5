"""The definitions a diff touches, for ``cg changes``: each side of every changed file is parsed (the
file as HEAD or the base revision has it, and as the working tree or HEAD has it) and each changed line
is given to the innermost definition around it on its side.

Why parse the two sides instead of reading the index's line ranges: the index holds the tree as it was
when it was last built, and the diff is against the tree now; after an edit that ``cg index`` has not
seen, the index's line numbers are off by the lines the edit added above them, and a definition the
edit added is not there at all. Parsing is tree-sitter on text read from git or the disk (nothing of
the repository runs), milliseconds per file, so the definitions and lines reported are always those
of the diff itself. Only the callers, flows and tests around them come from the index, which says
when it is older than the files involved (cg/queries/changes.py).

A changed line that no definition holds (an import, a module constant's neighbour) is a change of the
module itself; lambdas are not definitions of their own here (the function around them is).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cg.config import Settings
from cg.ingest import git
from cg.ingest.languages.registry import file_module
from cg.ingest.walk import IgnoreRules, file_kind, git_blob_sha, language_for
from cg.model import NOT_RETRIEVABLE, FileRecord, Symbol


@dataclass(frozen=True)
class ChangedDefinition:
    """A definition the diff touches: its id, name and lines on the side it lives on (the new side;
    the old one for a removed definition), and how many of its lines the diff changed."""

    id: str
    qualname: str
    kind: str
    path: str
    start_line: int
    end_line: int
    status: str  # added | removed | modified
    lines: int  # changed lines inside it (on its side)
    file_kind: str = "source"

    def node(self) -> dict[str, Any]:
        """As the store's nodes look (what impact and citations read)."""
        return {
            "id": self.id,
            "qualname": self.qualname,
            "name": self.qualname.rsplit(".", 1)[-1],
            "kind": self.kind,
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "file_kind": self.file_kind,
        }


@dataclass
class DiffDefinitions:
    """What a diff touches: per file its status, and the definitions it changes."""

    base: str  # the revision compared from (HEAD for the working tree)
    target: str  # "working tree" or "HEAD"
    files: dict[str, str] = field(default_factory=dict)  # path -> added | deleted | modified
    definitions: list[ChangedDefinition] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)  # changed files in no code language (docs, data)


def _symbols(path: str, data: bytes | None) -> list[Symbol] | None:
    """The definitions of ``path`` with content ``data``, or None when it is not code cg parses."""
    from cg.ingest.pipeline import extractor_for

    language = language_for(path) or ""
    extractor = extractor_for(language)
    if data is None or extractor is None:
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    record = FileRecord(path, language, file_kind(path, language), git_blob_sha(data), 0, file_module(language, path))
    try:
        return list(extractor.extract(record, data).symbols)
    except Exception:  # noqa: BLE001 - a version nested too deep to parse: the file is still listed
        return None


def _touched(symbols: list[Symbol], ranges: tuple[tuple[int, int], ...], whole: bool) -> dict[str, int]:
    """Symbol id -> changed lines, each line given to the innermost definition holding it (the
    module when none does); every definition of the file when ``whole`` (an added or deleted file)."""
    defs = [s for s in symbols if s.kind != "module" and s.kind not in NOT_RETRIEVABLE]
    module = next((s for s in symbols if s.kind == "module"), None)
    out: dict[str, int] = {}
    if whole:
        out.update({s.id: s.end_line - s.start_line + 1 for s in defs})
        if module is not None and not defs:
            out[module.id] = module.end_line - module.start_line + 1
        return out
    by_span = sorted(defs, key=lambda s: (s.end_line - s.start_line, s.start_line))
    for a, b in ranges:
        for line in range(a, b + 1):
            inner = next((s for s in by_span if s.start_line <= line <= s.end_line), module)
            if inner is not None:
                out[inner.id] = out.get(inner.id, 0) + 1
    return out


def _read_disk(settings: Settings, path: str) -> bytes | None:
    """The working-tree file, when it is a regular file within the size limit the index keeps."""
    full = settings.repo / path
    try:
        if full.is_symlink() or not full.is_file() or full.stat().st_size > settings.max_file_bytes:
            return None
        return full.read_bytes()
    except OSError:
        return None


def diff_definitions(settings: Settings, rev: str | None = None) -> DiffDefinitions:
    """The definitions the working tree (``rev`` None: against HEAD, staged changes included, new
    untracked files too) or ``rev..HEAD`` changes, by the walk's rules (ignored files left out)."""
    repo = settings.repo
    if not git.in_work_tree(repo):
        raise git.GitError(f"{repo} is not in a git repository: cg changes reads the diff from git")
    diffs = git.diff_files(repo, rev)
    rules = IgnoreRules(repo)
    diffs = [d for d in diffs if not rules.ignores(repo / d.path)]
    base = rev or "HEAD"
    specs = [f"{base}:./{d.old_path}" for d in diffs if d.old_path]
    if rev is not None:
        specs += [f"HEAD:./{d.new_path}" for d in diffs if d.new_path]
    blobs = git.blobs_at(repo, specs)
    out = DiffDefinitions(base, "working tree" if rev is None else "HEAD")
    for d in diffs:
        out.files[d.path] = d.status
        before = _symbols(d.old_path, blobs.get(f"{base}:./{d.old_path}")) if d.old_path else []
        if d.new_path:
            data = _read_disk(settings, d.new_path) if rev is None else blobs.get(f"HEAD:./{d.new_path}")
            after = _symbols(d.new_path, data)
        else:
            after = []
        if before is None and after is None:
            out.unparsed.append(d.path)
            continue
        before, after = before or [], after or []
        old_ids = {s.id for s in before}
        new_ids = {s.id for s in after}
        new_touch = _touched(after, d.new, whole=not d.old_path)
        old_touch = _touched(before, d.old, whole=not d.new_path)
        for s in after:
            if s.id in new_touch or (s.id in old_touch and s.id in new_ids):
                status = "modified" if s.id in old_ids else "added"
                out.definitions.append(_changed(s, status, new_touch.get(s.id, 0) or old_touch.get(s.id, 0)))
        for s in before:
            if s.id in old_touch and s.id not in new_ids:
                out.definitions.append(_changed(s, "removed", old_touch[s.id]))
    return out


def _changed(s: Symbol, status: str, lines: int) -> ChangedDefinition:
    return ChangedDefinition(
        s.id,
        s.qualname,
        s.kind,
        s.path,
        s.start_line,
        s.end_line,
        status,
        lines,
        "test" if file_kind(s.path, language_for(s.path) or "") == "test" else "source",
    )


def disk_sha(repo: Path, path: str) -> str | None:
    """git's blob sha of the working-tree file (None when it is gone or unreadable)."""
    full = repo / path
    try:
        return None if full.is_symlink() or not full.is_file() else git_blob_sha(full.read_bytes())
    except OSError:
        return None
