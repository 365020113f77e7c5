"""Which files to index: .gitignore/.cgignore-aware, vendor folders skipped, secret-bearing files
skipped unread (by name) or unused (by content, cg/ingest/secrets.py), binary and non-UTF-8 files
counted and reported instead of crashing the run."""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from cg.ingest.languages.registry import (
    is_test_name,
    language_named,
    language_of_file,
    language_of_interpreter,
)
from cg.ingest.secrets import secret_by_content, secret_by_name

DEFAULT_SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".cg",
        ".venv",
        "venv",
        "env",
        "node_modules",
        "vendor",
        "third_party",
        "dist",
        "build",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".eggs",
        "site-packages",
    }
)
# Generated or lock files: large, machine-written, never what a question is about.
SKIP_FILES = frozenset({"package-lock.json", "yarn.lock", "pnpm-lock.yaml", "Cargo.lock", "composer.lock", "go.sum"})
SNIFF_BYTES = 8192


StatKey = tuple[int, int, int, int, int]  # size, mtime, ctime (ns), inode, device
# A file changed this close to the walk's start (or after it) may change again within the same tick
# of the filesystem's clock: its stat is not kept (git calls such entries "racily clean"). Two
# seconds cover the coarsest timestamps a repository may sit on (FAT's, some network filesystems').
RACY_NS = 2_000_000_000


def stat_key(info: os.stat_result, started_ns: int) -> StatKey | None:
    """What identifies this version of a file without reading it, or None when it changed too
    recently to tell (``RACY_NS``).

    Why: an incremental run read and hashed every file to find the changed ones (Django: 6,700 files,
    0.3-0.45 s of a one-file edit's run). A file whose size, modification time, change time, inode
    and device are those the last run saw is the file it read. The change time is the guard: a tool
    can set a file's modification time back (``cp -p``, ``touch -d``, ``tar``), but any write sets
    the change time to the clock's now, which no user-space call can set back, so rewriting a file
    with other bytes of the same length and its old mtime still shows."""
    if max(info.st_mtime_ns, info.st_ctime_ns) >= started_ns - RACY_NS:
        return None
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev)


@dataclass(frozen=True)
class SourceFile:
    path: str  # repo-relative, forward slashes
    abspath: Path
    language: str
    data: bytes  # the text the index keeps: the file's, with its secrets masked once a run redacts it
    blob_sha: str  # git's sha of the file on disk, never of the redacted text
    stat: StatKey | None = None  # what the next walk may compare instead of reading it (``stat_key``)


@dataclass
class WalkReport:
    """What the walk saw, so the run summary can say exactly what was left out and why."""

    seen: int = 0
    ignored: int = 0
    other_text: int = 0  # text files in no supported language
    binary: list[str] = field(default_factory=list)
    not_utf8: list[str] = field(default_factory=list)
    too_large: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    secret_files: list[str] = field(default_factory=list)  # private keys, credentials: skipped whole
    kept: list[str] = field(default_factory=list)  # indexable files not read: their stat is the one ``known`` gave


def git_blob_sha(data: bytes) -> str:
    """The sha1 git gives this content (``git hash-object``), so the index can be compared to git."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


TEST_FOLDERS = frozenset({"tests", "test", "testing", "__tests__"})


def is_test_path(path: str) -> bool:
    """A file under a test folder, or whose name a language's test-file pattern matches."""
    parts = path.split("/")
    return any(p in TEST_FOLDERS for p in parts[:-1]) or is_test_name(parts[-1])


def detect_language(name: str, data: bytes) -> str | None:
    """The language of a file: by extension or name (Dockerfile), else by its ``#!`` line."""
    suffix = os.path.splitext(name)[1]
    found = language_of_file(name, suffix if suffix != "." else "")  # Path(name).suffix, without a path object
    if found is not None:
        return found.name
    if data.startswith(b"#!"):
        words = data[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
        if words and words[0].endswith("/env"):
            words = [w for w in words[1:] if not w.startswith("-")]
        if words:
            found = language_of_interpreter(words[0].rsplit("/", 1)[-1])
            return found.name if found is not None else None
    return None


def _load_spec(directory: str | Path) -> pathspec.GitIgnoreSpec | None:
    lines: list[str] = []
    for name in (".gitignore", ".cgignore"):
        candidate = os.path.join(directory, name)
        if os.path.isfile(candidate):
            try:
                with open(candidate, encoding="utf-8", errors="replace") as handle:
                    lines.extend(handle.read().splitlines())
            except OSError:
                continue
    return pathspec.GitIgnoreSpec.from_lines(lines) if lines else None


def language_for(path: str) -> str | None:
    """The language a path's name alone tells (no content at hand: a file in an old commit)."""
    return detect_language(path.rsplit("/", 1)[-1], b"")


def file_kind(path: str, language: str) -> str:
    """FileRecord.kind: docs and config by their language, code files test or source by their path."""
    found = language_named(language)
    if found is not None and found.kind != "code":
        return found.kind
    return "test" if is_test_path(path) else "source"


def skipped_dir(name: str) -> bool:
    """A folder the walk never enters, whatever the ignore files say (vendored code, caches, the index)."""
    return name in DEFAULT_SKIP_DIRS or name.endswith(".egg-info")


def skipped_file(name: str) -> bool:
    """A file the walk never indexes by its name alone (the ignore files themselves, lock files)."""
    return name in (".gitignore", ".cgignore") or name in SKIP_FILES


def _ignored(specs: list[tuple[str, pathspec.GitIgnoreSpec]], rel: str, is_dir: bool) -> bool:
    """As git decides: the deepest ignore file with a pattern matching the path decides, so a nested
    ``!pattern`` brings back what a parent folder's file leaves out. ``specs`` are the ignore files
    above ``rel`` (the path relative to the root), each with its folder as a prefix of ``rel`` ("" or
    ending in "/"), so no path object is made per file."""
    for base, spec in reversed(specs):
        below = rel[len(base) :]
        decided = spec.check_file(below + "/" if is_dir else below).include
        if decided is not None:
            return decided
    return False


class IgnoreRules:
    """The walk's rules asked about one path at a time (``cg watch`` asks about each path an event
    names): the same skipped folders and names, and the same .gitignore/.cgignore files, deepest
    first. The ignore files are read once per folder and forgotten when one of them changes
    (``forget``). A path outside ``root`` is ignored."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._specs: dict[Path, pathspec.GitIgnoreSpec | None] = {}

    def forget(self) -> None:
        self._specs.clear()

    def _spec(self, directory: Path) -> pathspec.GitIgnoreSpec | None:
        if directory not in self._specs:
            self._specs[directory] = _load_spec(directory)
        return self._specs[directory]

    def ignores(self, path: Path) -> bool:
        """True when the walk would leave ``path`` out by its place or name (not by its content: a
        binary or secret-bearing file is the walk's to count). The last part of a path that no
        longer exists is taken for a file."""
        try:
            parts = path.relative_to(self.root).parts
        except ValueError:
            return True
        specs: list[tuple[str, pathspec.GitIgnoreSpec]] = []
        current, prefix = self.root, ""
        for i, part in enumerate(parts):
            spec = self._spec(current)
            if spec is not None:
                specs.append((prefix, spec))
            current, rel = current / part, prefix + part
            is_dir = i < len(parts) - 1 or current.is_dir()
            if (skipped_dir(part) if is_dir else skipped_file(part)) or _ignored(specs, rel, is_dir):
                return True
            prefix = rel + "/"
        return False


def walk(
    root: Path,
    report: WalkReport,
    max_bytes: int = 1_000_000,
    only: set[str] | None = None,
    known: Mapping[str, StatKey] | None = None,
) -> Iterator[SourceFile]:
    """Yield the indexable source files under ``root`` in a stable order; count everything else.
    With ``only`` (repo-relative paths), files outside it are neither read nor counted. With
    ``known`` (path -> the ``stat_key`` a run recorded when it read the file), a file whose stat is
    still that is not read: it is listed in ``report.kept`` instead of yielded (the caller has its
    content's sha and language from that run).

    Paths are plain strings here, each file's relative path one concatenation and its type and size
    one ``lstat``: with a path object, a ``relative_to`` and an ``is_symlink`` per file, the walk of
    Django's 6,800 files took 0.45-0.7 s of a one-file edit's run, and takes 0.3-0.4 s so."""
    root = root.resolve()
    top = str(root)
    started = time.time_ns()
    known = known or {}
    # (the folder relative to root, "" or ending in "/", and its spec): each ignore file applies to
    # paths relative to its own folder
    specs: list[tuple[str, pathspec.GitIgnoreSpec]] = []

    for dirpath, dirnames, filenames in os.walk(top):
        here = os.path.relpath(dirpath, top)
        prefix = "" if here == "." else here.replace(os.sep, "/") + "/"
        specs[:] = [(b, s) for b, s in specs if prefix.startswith(b)]
        spec = _load_spec(dirpath)
        if spec is not None:
            specs.append((prefix, spec))
        kept_dirs = []
        for d in sorted(dirnames):
            if skipped_dir(d) or _ignored(specs, prefix + d, True):
                report.ignored += 1
                continue
            kept_dirs.append(d)
        dirnames[:] = kept_dirs
        for name in sorted(filenames):
            rel = prefix + name
            if only is not None and rel not in only:
                continue
            report.seen += 1
            if skipped_file(name) or _ignored(specs, rel, False):
                report.ignored += 1
                continue
            full = os.path.join(dirpath, name)
            try:
                info: os.stat_result | None = os.lstat(full)
            except OSError:
                info = None  # gone since the folder was listed: _read reports it unreadable
            if info is not None and stat.S_ISLNK(info.st_mode):
                report.ignored += 1
                continue
            if secret_by_name(rel):  # never opened
                report.secret_files.append(rel)
                continue
            key = stat_key(info, started) if info is not None and stat.S_ISREG(info.st_mode) else None
            if key is not None and known.get(rel) == key:
                report.kept.append(rel)
                continue
            source = _read(full, info, rel, report, max_bytes)
            if source is None:
                continue
            if secret_by_content(rel, source):
                report.secret_files.append(rel)
                continue
            language = detect_language(name, source)
            if language is None:
                report.other_text += 1
                continue
            yield SourceFile(rel, Path(full), language, source, git_blob_sha(source), key)


def _read(full: str, info: os.stat_result | None, rel: str, report: WalkReport, max_bytes: int) -> bytes | None:
    """The file's bytes, or None with the reason counted; ``info`` is its ``lstat`` (None: it failed)."""
    if info is None or not stat.S_ISREG(info.st_mode):  # a FIFO, socket or device: reading it could block
        report.unreadable.append(rel)
        return None
    if info.st_size > max_bytes:
        report.too_large.append(rel)
        return None
    try:
        with open(full, "rb") as handle:
            data = handle.read()
    except OSError:
        report.unreadable.append(rel)
        return None
    if b"\0" in data[:SNIFF_BYTES]:
        report.binary.append(rel)
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        report.not_utf8.append(rel)
        return None
    return data


def module_name(path: str) -> str:
    """Dotted module for a repo-relative Python path; a leading ``src/`` layout folder is dropped."""
    parts = path[: -len(Path(path).suffix)].split("/") if Path(path).suffix else path.split("/")
    if parts and parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)
