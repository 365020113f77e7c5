"""What git knows about the tree: HEAD, what changed since a revision, when each file was last
committed, and the recent commits with the lines their diffs touched.

Everything goes through the ``git`` command line (no library): it is on every machine that has a
repository, and a tree outside git simply has no history (content hashes still drive freshness).
Failures are never fatal to an index run: no git, no repository or a shallow clone just mean fewer
facts, and the caller reports them.

A repository's file names are untrusted text: every listing is read NUL-separated (``-z``), the
paths in patch headers (which git C-quotes) are unquoted, and a revision from the user is passed
after ``--end-of-options`` and refused when it starts with ``-``, so no name or revision is ever
read as an option (``--since=--output=FILE`` must not make git write FILE).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from cg.errors import CgError


class GitError(CgError, RuntimeError):
    """A git command the user asked for failed (a bad ``--since`` revision): one line."""


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    author: str
    committed_at: int  # unix seconds
    subject: str
    message: str  # the whole message: subject, blank line, body
    # path -> line ranges (1-based, inclusive) of the lines the commit added or changed, in the
    # file as the commit left it; a deletion marks the line it happened before
    hunks: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    removed: tuple[str, ...] = ()  # files the commit deleted

    @property
    def short(self) -> str:
        return self.sha[:10]


def _command(repo: Path, *args: str) -> list[str]:
    """A git command line for ``repo``: no pager, and paths in patch headers always C-quoted the same
    way (``unquote_path`` reads them back)."""
    return ["git", "-C", str(repo), "-c", "core.quotePath=true", "--no-pager", *args]


def checked_revision(rev: str) -> str:
    """``rev`` when it can only be read as a revision; a GitError for one that looks like an option."""
    if not rev or rev.startswith("-") or "\0" in rev or "\n" in rev:
        raise GitError(f"not a revision: {rev!r} (a revision cannot start with '-' or be empty)")
    return rev


def _git(repo: Path, *args: str, strict: bool = False) -> str | None:
    """stdout of a git command; None when it fails, or a GitError with ``strict``."""
    try:
        done = subprocess.run(_command(repo, *args), capture_output=True, text=True, errors="replace", timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        if strict:
            raise GitError(f"cannot run git: {exc}") from exc
        return None
    if done.returncode != 0:
        if not strict:
            return None
        raise GitError(done.stderr.strip().splitlines()[0] if done.stderr.strip() else f"git {args[0]} failed")
    return done.stdout


def is_repository(repo: Path) -> bool:
    """True when ``repo`` is the top of a git work tree (not merely inside someone else's)."""
    top = _git(repo, "rev-parse", "--show-toplevel")
    return top is not None and Path(top.strip()).resolve() == repo.resolve()


def in_work_tree(repo: Path) -> bool:
    """True when ``repo`` is inside a git work tree (its top, or a folder of a bigger one)."""
    out = _git(repo, "rev-parse", "--is-inside-work-tree")
    return out is not None and out.strip() == "true"


def head(repo: Path) -> str:
    """The commit HEAD names, or "" (no git, no commits yet)."""
    out = _git(repo, "rev-parse", "--verify", "-q", "HEAD")
    return out.strip() if out else ""


def changed_since(repo: Path, rev: str) -> set[str]:
    """Paths that differ between ``rev`` and the working tree (committed, staged or not), plus new
    untracked files: everything an index of ``rev`` could be missing."""
    rev = checked_revision(rev)
    diff = _git(
        repo, "diff", "-z", "--name-only", "--relative", "--no-renames", "--end-of-options", rev, "--", ".", strict=True
    )
    untracked = _git(repo, "ls-files", "-z", "--others", "--exclude-standard") or ""
    return {name for name in ((diff or "") + untracked).split("\0") if name}


def commits_since(repo: Path, rev: str) -> int:
    """How many commits on HEAD after ``rev`` touch ``repo`` (a folder inside a bigger repository
    counts its own commits only)."""
    if not rev or rev.startswith("-"):
        return 0
    out = _git(repo, "rev-list", "--count", "--end-of-options", f"{rev}..HEAD", "--", ".")
    return int(out.strip()) if out and out.strip().isdigit() else 0


def last_commit_times(repo: Path, paths: set[str], max_commits: int = 20000) -> dict[str, int]:
    """For each path, when the newest commit that touched it was made (unix seconds). One pass over
    ``git log`` from HEAD, stopping once every path is placed (or after ``max_commits``)."""
    if not paths:
        return {}
    try:
        proc = subprocess.Popen(
            _command(
                repo,
                "log",
                "-z",
                "--format=%x01cg-time:%ct",
                "--name-only",
                "--relative",
                "--no-renames",
                f"-n{max_commits}",
                "--",
                ".",
            ),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return {}
    found: dict[str, int] = {}
    assert proc.stdout is not None
    try:
        for when, name in _dated_names(proc.stdout):
            if name in paths and name not in found:
                found[name] = when
                if len(found) == len(paths):
                    break
    finally:
        proc.stdout.close()
        proc.kill()
        proc.wait()
    return found


_TIME = "\x01cg-time:"


def _dated_names(stream: IO[bytes]) -> Iterator[tuple[int, str]]:
    """(commit time, path) from ``git log -z --format=%x01cg-time:%ct --name-only``: NUL-separated fields,
    where each commit's header is followed by a newline before its first name."""
    when, first, pending = 0, False, b""
    for block in iter(lambda: stream.read(1 << 16), b""):
        fields = (pending + block).split(b"\0")
        pending = fields.pop()
        for raw in fields:
            text = raw.decode("utf-8", "surrogateescape")
            if text.startswith(_TIME):
                when, first = int(text[len(_TIME) :] or 0), True
                continue
            if first and text.startswith("\n"):
                text = text[1:]
            first = False
            if text:
                yield when, text


_QUOTED = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def unquote_path(name: str) -> str:
    """A path as git prints it in a patch header: C-quoted (``"b/r\\303\\251essai.py"``) when it holds a
    quote, a backslash, a control or a non-ASCII byte, with a tab after it when it holds a space."""
    name = name.removesuffix("\t")
    if not (len(name) >= 2 and name.startswith('"') and name.endswith('"')):
        return name
    out, body, i = bytearray(), name[1:-1], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in "01234567" and i + 3 < len(body) and all(c in "01234567" for c in body[i + 1 : i + 4]):
                out.append(int(body[i + 1 : i + 4], 8) & 0xFF)
                i += 4
                continue
            out.append(_QUOTED.get(nxt, ord(nxt) if nxt.isascii() else 63))
            i += 2
            continue
        out.extend(ch.encode("utf-8", "surrogateescape"))
        i += 1
    return out.decode("utf-8", "surrogateescape")


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
_MARK = "\x1ecg-commit\x1f"


def recent_commits(repo: Path, limit: int) -> list[CommitInfo]:
    """The newest ``limit`` commits on HEAD that touch ``repo`` with their messages and the new-side
    line ranges of every hunk (``git log -p -U0``; merges contribute their message, not a diff).

    ``repo`` may be a folder inside a bigger repository (examples/shop in the cg clone): the pathspec
    ``-- .`` keeps the commits that touch the folder (not the whole repository's), and ``--relative``
    names their paths from it and drops the parts of a commit outside it."""
    if limit <= 0 or not head(repo):
        return []
    out = _git(
        repo,
        "log",
        f"-n{limit}",
        "--relative",
        "--no-renames",
        "--no-color",
        "-p",
        "-U0",
        "--no-ext-diff",
        "--no-textconv",
        f"--format={_MARK}%H%x1f%an%x1f%ct%x1f%B%x1e",
        "--",
        ".",
    )
    if not out:
        return []
    commits: list[CommitInfo] = []
    for block in out.split(_MARK)[1:]:
        header, _, patch = block.partition("\x1e")
        sha, author, ct, message = (header.split("\x1f", 3) + ["", "", "", ""])[:4]
        hunks: dict[str, list[tuple[int, int]]] = {}
        removed: list[str] = []
        current: str | None = None
        minus = ""
        for line in patch.splitlines():
            if line.startswith("--- "):
                minus = unquote_path(line[4:])
            elif line.startswith("+++ "):
                target = unquote_path(line[4:])
                if target == "/dev/null":
                    current = None
                    if minus.startswith("a/"):
                        removed.append(minus[2:])
                else:
                    current = target[2:] if target.startswith("b/") else target
                    hunks.setdefault(current, [])
            elif line.startswith("@@") and current is not None:
                m = _HUNK.match(line)
                if m:
                    start, count = int(m.group(1)), int(m.group(2) or "1")
                    hunks[current].append((start, start + count - 1) if count else (max(start, 1), max(start, 1)))
        message = message.strip()
        commits.append(
            CommitInfo(
                sha=sha.strip(),
                author=author,
                committed_at=int(ct or 0),
                subject=message.splitlines()[0] if message else "",
                message=message,
                hunks=hunks,
                removed=tuple(removed),
            )
        )
    return commits


_OBJECT = re.compile(rb"[0-9a-f]{40,64} (\w+) (\d+)\n")


def blobs_at(repo: Path, specs: list[str]) -> dict[str, bytes | None]:
    """``rev:path`` -> the content at that revision (None where it does not exist), in one
    ``git cat-file --batch -z`` process (NUL-separated, so a path may hold a newline)."""
    if not specs:
        return {}
    wanted = [s.encode("utf-8", "surrogateescape") for s in specs]
    try:
        done = subprocess.run(
            _command(repo, "cat-file", "--batch", "-z"),
            input=b"".join(w + b"\0" for w in wanted),
            capture_output=True,
            timeout=300,
        )
    except (OSError, subprocess.TimeoutExpired):
        return {}
    data, pos = done.stdout, 0
    out: dict[str, bytes | None] = {}
    for spec, raw in zip(specs, wanted, strict=True):
        found = _OBJECT.match(data, pos)
        if found:  # "<sha> <type> <size>", the content, a newline
            pos = found.end()
            size = int(found.group(2))
            out[spec] = data[pos : pos + size] if found.group(1) == b"blob" else None
            pos += size + 1
        else:  # "<spec> missing" (or ambiguous): the spec is echoed as given, newlines and all
            if not data.startswith(raw, pos):
                break  # not what git answers: give up on the rest rather than misread it
            pos = data.index(b"\n", pos + len(raw)) + 1
            out[spec] = None
    for spec in specs:
        out.setdefault(spec, None)
    return out


@dataclass(frozen=True)
class FileDiff:
    """One file of a diff: its path on each side ("" where it does not exist) and the line ranges
    (1-based, inclusive) each side's hunks cover; a pure insertion has no old range, a pure deletion
    no new one."""

    old_path: str
    new_path: str
    old: tuple[tuple[int, int], ...] = ()
    new: tuple[tuple[int, int], ...] = ()

    @property
    def path(self) -> str:
        return self.new_path or self.old_path

    @property
    def status(self) -> str:
        return "added" if not self.old_path else "deleted" if not self.new_path else "modified"


_HUNK_SIDES = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def diff_files(repo: Path, base: str | None = None) -> list[FileDiff]:
    """The files a diff touches under ``repo``, with the hunks of both sides (``git diff -U0``): with
    ``base`` None, HEAD against the working tree (staged and not) plus the untracked files (each
    wholly added); else ``base`` against HEAD (``base..HEAD``). A bad revision is a GitError."""
    if not head(repo):
        raise GitError("no commit yet: cg changes compares with HEAD (commit first)")
    revs = ["HEAD"] if base is None else [checked_revision(base), "HEAD"]
    if base is not None and _git(repo, "rev-parse", "--verify", "-q", "--end-of-options", f"{base}^{{commit}}") is None:
        raise GitError(f"unknown revision: {base!r} (not a commit of this repository)")
    out = _git(
        repo,
        "diff",
        "-U0",
        "--relative",
        "--no-renames",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--end-of-options",
        *revs,
        "--",
        ".",
        strict=True,
    )
    files: list[FileDiff] = []
    old_path = new_path = ""
    old: list[tuple[int, int]] = []
    new: list[tuple[int, int]] = []

    def flush() -> None:
        if old_path or new_path:
            files.append(FileDiff(old_path, new_path, tuple(old), tuple(new)))

    for line in (out or "").splitlines():
        if line.startswith("diff --git "):
            flush()
            old_path, new_path, old, new = "", "", [], []
        elif line.startswith("--- "):
            name = unquote_path(line[4:])
            old_path = name[2:] if name.startswith("a/") else ""
        elif line.startswith("+++ "):
            name = unquote_path(line[4:])
            new_path = name[2:] if name.startswith("b/") else ""
        elif line.startswith("@@"):
            m = _HUNK_SIDES.match(line)
            if m:
                a, b, c, d = int(m.group(1)), int(m.group(2) or "1"), int(m.group(3)), int(m.group(4) or "1")
                if b:
                    old.append((a, a + b - 1))
                if d:
                    new.append((c, c + d - 1))
    flush()
    if base is None:
        untracked = _git(repo, "ls-files", "-z", "--others", "--exclude-standard", "--", ".") or ""
        files += [FileDiff("", name) for name in untracked.split("\0") if name]
    return files
