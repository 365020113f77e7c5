"""`cg status`: what the index holds, from which commit, and what in the working tree it does not
reflect yet. Reads the working tree the way `cg index` does (same walk, same ignore rules, same blob
shas), so "stale" here means exactly "the next `cg index` will redo this"."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from cg.config import Settings
from cg.graph.store import GraphReader
from cg.ingest import git
from cg.ingest.state import fingerprint, index_settings, load_state_header, state_path
from cg.ingest.walk import WalkReport, walk


@dataclass
class Status:
    repo: str
    backend: str
    indexed_at: str | None
    indexed_head: str  # the commit HEAD named when the index was last updated ("" outside git)
    head: str  # HEAD now
    commits_since: int  # commits on HEAD since the indexed one
    counts: dict[str, int]
    modified: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    next_run: str = "incremental"  # what `cg index` will do: incremental, or full (and why)
    unembedded_files: int = 0  # stored without their vectors (`cg index --embed later`): the next run computes them
    unembedded_commits: int = 0

    @property
    def fresh(self) -> bool:
        return not (self.modified or self.added or self.deleted) and self.head == self.indexed_head

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "fresh": self.fresh}


def index_status(settings: Settings, store: GraphReader) -> Status:
    """What the index holds and how it differs from the working tree (modified, added, deleted files)
    and what the next ``cg index`` will do; reads the tree and the store, writes nothing."""
    stored = store.file_shas()
    report = WalkReport()
    now = {s.path: s.blob_sha for s in walk(settings.repo, report, settings.max_file_bytes)}
    indexed_head = store.get_meta("head") or ""
    head = git.head(settings.repo)
    status = Status(
        repo=str(settings.repo),
        backend=store.backend,
        indexed_at=store.get_meta("indexed_at"),
        indexed_head=indexed_head,
        head=head,
        commits_since=git.commits_since(settings.repo, indexed_head) if head and indexed_head else 0,
        counts=store.stats(),
        modified=sorted(p for p, sha in now.items() if p in stored and stored[p] != sha),
        added=sorted(p for p in now if p not in stored),
        deleted=sorted(p for p in stored if p not in now),
        unembedded_files=int(store.get_meta("unembedded_files") or 0),
        unembedded_commits=int(store.get_meta("unembedded_commits") or 0),
    )
    state = load_state_header(state_path(settings.checked_index_dir(), store.backend))
    if state is None:
        status.next_run = "full (no saved state from a previous run here)"
    elif not state.token or state.token != store.get_meta("state_token"):
        status.next_run = "full (the index was written by another run or machine, or a run did not finish)"
    else:
        now_settings = index_settings(settings)
        if state.fingerprint != fingerprint(*now_settings.values()):
            before = state.settings  # states saved before names were kept have none
            changed = [name for name, value in now_settings.items() if before.get(name) != value] if before else []
            what = ", ".join(f"{name} {before[name]} -> {now_settings[name]}" for name in changed if name in before)
            status.next_run = f"full (settings that shape the index changed: {what or 'since the last run'})"
    return status
