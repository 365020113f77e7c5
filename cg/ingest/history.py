"""Commit history: the newest commits as Commit nodes, with TOUCHES edges to the files their diffs
changed and to the definitions their hunks overlap, in that commit's own version of the file."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from cg.graph.store import GraphWriter
from cg.ingest import git
from cg.ingest.languages import Extractor
from cg.ingest.languages.registry import file_module
from cg.ingest.secrets import redactor
from cg.ingest.state import IndexState
from cg.ingest.walk import language_for
from cg.lexical import analyze_text
from cg.model import CommitRecord, FileRecord

ExtractorFor = Callable[[str], Extractor | None]


@dataclass(frozen=True)
class History:
    """The commit window after this run, the commits new to it, and the ids that left it."""

    commits: dict[str, CommitRecord] = field(default_factory=dict)  # the window, newest first
    new: list[CommitRecord] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    redacted: dict[str, int] = field(default_factory=dict)  # short sha -> secrets masked in its message


def read_history(
    repo: Path, limit: int, git_head: str, saved: IndexState | None, extractor_for: ExtractorFor
) -> History:
    """The newest ``limit`` commits; the ones the ``saved`` state (None when it is not trusted) already
    has keep their touches. ``extractor_for`` parses a file at a commit, to find the definitions its
    hunks overlap."""
    if not git_head or limit <= 0:
        return History(gone=sorted(saved.commits) if saved is not None else [])
    if saved is not None and git_head == saved.head:
        return History(commits=saved.commits)
    infos = git.recent_commits(repo, limit)
    known = saved.commits if saved is not None else {}
    todo = [i for i in infos if i.sha not in known]
    # "rev:./path" names the path from ``repo``, which may be a folder inside the repository (a bare
    # "rev:path" is read from the repository's top)
    specs = sorted({f"{i.sha}:./{p}" for i in todo for p in i.hunks if extractor_for(language_for(p) or "")})
    blobs = git.blobs_at(repo, specs)
    commits: dict[str, CommitRecord] = {}
    new: list[CommitRecord] = []
    redacted: dict[str, int] = {}
    for info in infos:
        if info.sha in known:
            commits[info.sha] = known[info.sha]
            continue
        touches: list[tuple[str, str]] = []
        for path, ranges in sorted(info.hunks.items()):
            touches.append((path, ""))
            data = blobs.get(f"{info.sha}:./{path}")
            language = language_for(path) or ""
            extractor = extractor_for(language)
            if data is None or extractor is None:
                continue
            record = FileRecord(path, language, "source", "", 0, file_module(language, path))
            try:
                symbols = extractor.extract(record, data).symbols
            except Exception:  # noqa: BLE001 - an old version nested too deep: the file's touch is kept
                continue
            for sym in symbols:
                if sym.kind != "module" and any(a <= sym.end_line and b >= sym.start_line for a, b in ranges):
                    touches.append((path, sym.id))
        # a message is stored, embedded and full-text indexed: its secrets are masked first, here only
        message, subject = redactor().redact(info.message), redactor().redact(info.subject)
        if message.count or subject.count:
            redacted[info.short] = max(message.count, subject.count)
        commit = CommitRecord(
            id=info.sha,
            short=info.short,
            author=info.author,
            committed_at=info.committed_at,
            subject=subject.text,
            message=message.text,
            search_text=analyze_text(message.text),
            touches=tuple(touches),
        )
        commits[info.sha] = commit
        new.append(commit)
    gone = sorted(set(known) - set(commits)) if saved is not None else []
    return History(commits, new, gone, redacted)


def write_history(
    store: GraphWriter, history: History, vectors: np.ndarray | None, rewritten: set[str], full: bool
) -> None:
    """New commits with their TOUCHES; for kept commits, TOUCHES into files rewritten by this run are
    laid again (a re-created symbol must get back the commits that touched it)."""
    store.delete_commits(sorted(store.commit_ids() - set(history.commits)) if full else history.gone)
    store.write_commits(history.new, vectors)
    new_ids = {c.id for c in history.new}
    pairs: list[tuple[str, str, str]] = []
    for commit in history.commits.values():
        for path, sid in commit.touches:
            if full or commit.id in new_ids or path in rewritten:
                pairs.append((commit.id, "Symbol" if sid else "File", sid or path))
    store.write_touches(pairs)
