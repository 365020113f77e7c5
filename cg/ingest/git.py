"""What git knows about the tree: HEAD, what changed since a revision, when each file was last
committed, and the recent commits with the lines their diffs touched.

Everything goes through the ``git`` command line (no library): it is on every machine that has a
repository, and a tree outside git simply has no history (content hashes still drive freshness).
Failures are never fatal to an index run: no git, no repository or a shallow clone just mean fewer
facts, and the caller reports them.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

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


def _git(repo: Path, *args: str, strict: bool = False) -> str | None:
    """stdout of a git command; None when it fails, or a GitError with ``strict``."""
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, errors="replace", timeout=300
        )
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


def head(repo: Path) -> str:
    """The commit HEAD names, or "" (no git, no commits yet)."""
    out = _git(repo, "rev-parse", "--verify", "-q", "HEAD")
    return out.strip() if out else ""


def changed_since(repo: Path, rev: str) -> set[str]:
    """Paths that differ between ``rev`` and the working tree (committed, staged or not), plus new
    untracked files: everything an index of ``rev`` could be missing."""
    diff = _git(repo, "diff", "--name-only", "--relative", "--no-renames", rev, "--", ".", strict=True) or ""
    untracked = _git(repo, "ls-files", "--others", "--exclude-standard") or ""
    return {line for line in (diff + untracked).splitlines() if line}


def commits_since(repo: Path, rev: str) -> int:
    out = _git(repo, "rev-list", "--count", f"{rev}..HEAD")
    return int(out.strip()) if out and out.strip().isdigit() else 0


def last_commit_times(repo: Path, paths: set[str], max_commits: int = 20000) -> dict[str, int]:
    """For each path, when the newest commit that touched it was made (unix seconds). One pass over
    ``git log`` from HEAD, stopping once every path is placed (or after ``max_commits``)."""
    if not paths:
        return {}
    try:
        proc = subprocess.Popen(
            [
                "git",
                "-C",
                str(repo),
                "log",
                "--format=%x00%ct",
                "--name-only",
                "--relative",
                "--no-renames",
                "-n",
                str(max_commits),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            errors="replace",
        )
    except OSError:
        return {}
    found: dict[str, int] = {}
    when = 0
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            line = line.rstrip("\n")
            if line.startswith("\0"):
                when = int(line[1:] or 0)
            elif line and line in paths and line not in found:
                found[line] = when
                if len(found) == len(paths):
                    break
    finally:
        proc.stdout.close()
        proc.kill()
        proc.wait()
    return found


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
_MARK = "\x1ecg-commit\x1f"


def recent_commits(repo: Path, limit: int) -> list[CommitInfo]:
    """The newest ``limit`` commits on HEAD with their messages and the new-side line ranges of
    every hunk (``git log -p -U0``; merges contribute their message, not a diff)."""
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
        f"--format={_MARK}%H%x1f%an%x1f%ct%x1f%B%x1e",
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
                minus = line[4:]
            elif line.startswith("+++ "):
                target = line[4:]
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


def blobs_at(repo: Path, specs: list[str]) -> dict[str, bytes | None]:
    """``rev:path`` -> the content at that revision (None where it does not exist), in one
    ``git cat-file --batch`` process."""
    if not specs:
        return {}
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), "cat-file", "--batch"],
            input="".join(f"{s}\n" for s in specs).encode(),
            capture_output=True,
            timeout=300,
        )
    except (OSError, subprocess.TimeoutExpired):
        return {}
    data, pos = done.stdout, 0
    out: dict[str, bytes | None] = {}
    for spec in specs:
        end = data.index(b"\n", pos)
        header = data[pos:end].decode(errors="replace").split()
        pos = end + 1
        if len(header) == 3 and header[1] == "blob":
            size = int(header[2])
            out[spec] = data[pos : pos + size]
            pos += size + 1
        else:
            out[spec] = None
    return out
