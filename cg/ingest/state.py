"""What the last index run left behind on the side, so the next run can do only the work a change needs.

The graph itself is the truth; this is a cache of the inputs that produced it, per file: the blob sha
and commit time it was built from, its parsed records (so an unchanged file is never parsed again
but still takes part in resolution), its resolved edges and externals (so an unaffected file keeps
its edges without asking jedi again), and the token lengths BM25 needs. Commits keep the symbols
their hunks touched (a commit never changes, so that is computed once).

Layout: ``state-<backend>.msgpack`` is a small manifest (fingerprint, token, settings, commits) that
names the shards, ``state-<backend>/<content hash>.msgpack``, each holding the records of the files
whose path hashes to it (``SHARDS`` of them). A run writes only the shards whose records changed, under
new names, then the manifest (a rename: one atomic step), then removes the shards no manifest names,
so a crash leaves the old manifest with all of its shards. Why: Django's state is 166 MB, and writing
it whole took 1.0-1.2 s of a one-file edit (the page cache was already full of the generation the run
copied); 13 re-resolved files touch at most 13 of the 256 shards, about 9 MB.

Trust: a run writes a fresh random token into both this file and the store's Meta, the store's
last. A state whose token or fingerprint (cg's state format, resolver, chunking, embedding variant,
whether docstrings are embedded, history depth) does not match is ignored and the run is a full one,
so a crashed run, an index rebuilt by someone else, or a changed setting can never leave a
half-updated graph behind (the check is cg/ingest/freshness.py's ``trusted``).
"""

from __future__ import annotations

import gc
import hashlib
import os
import re
import uuid
import zlib
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import overload

import msgspec

from cg.config import Settings
from cg.embed import embedding_key
from cg.errors import CgError
from cg.graph.generations import read_regular
from cg.graph.store import SCHEMA_VERSION
from cg.model import CommitRecord, DocSection, Edge, External, FileExtraction

# Bumped whenever extraction, resolution or the stored schema changes what a file yields.
# 6: edges decoded on demand, with their counts by kind; 5: sharded records; 4: operator sites
# (CallSite.protocol); 3: failures kept per file; 2: MessagePack (1: pickle)
STATE_VERSION = "6"


Counts = list[tuple[str, str, str, int]]  # how many edges of each (type, destination label, resolved_by)


class Edges(Sequence[Edge]):
    """A file's resolved edges, as loaded: decoded only when read, with their counts by kind kept
    beside them so the run's totals need no edge decoded.

    Why: Django's state holds 218,000 edges, and decoding them was 0.67 of the 1.2 s it took to
    decode the whole state, in every run; a one-file edit reads the edges of the files it re-resolves
    and, when a definition's resolved inputs changed, scans the rest once for edges into it. Stored as
    ``[counts, edges]`` (``encode`` below), so the edges' bytes are skipped on load and written back
    unchanged when a record is saved again without them being read."""

    __slots__ = ("_items", "_raw", "_counts")

    def __init__(self, items: Sequence[Edge] = ()) -> None:
        self._items: list[Edge] | None = list(items)
        self._raw: msgspec.Raw | None = None
        self._counts: Counts | None = None

    @classmethod
    def stored(cls, counts: Counts, raw: msgspec.Raw) -> Edges:
        edges = cls()
        edges._items, edges._raw, edges._counts = None, raw, counts
        return edges

    def _list(self) -> list[Edge]:
        if self._items is None:
            assert self._raw is not None
            try:
                self._items = _EDGES.decode(self._raw)
            except msgspec.DecodeError as e:  # a state file that was tampered with (it sits in the repository)
                raise CgError(f"the saved index state is damaged ({e}): run `cg index --full` to rebuild it") from e
        return self._items

    @overload
    def __getitem__(self, i: int) -> Edge: ...
    @overload
    def __getitem__(self, i: slice) -> list[Edge]: ...
    def __getitem__(self, i: int | slice) -> Edge | list[Edge]:
        return self._list()[i]

    def __len__(self) -> int:
        return sum(n for *_, n in self._counts) if self._counts is not None else len(self._list())

    def __iter__(self) -> Iterator[Edge]:
        return iter(self._list())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and self._list() == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Edges({self._list()!r})"

    def counts(self) -> Counts:
        """How many edges of each kind, without decoding the edges of a record that was only loaded."""
        if self._counts is None:
            kinds = Counter((e.type, e.dst_label, e.resolved_by) for e in self._list())
            self._counts = [(*kind, n) for kind, n in sorted(kinds.items())]
        return self._counts

    def encode(self) -> tuple[Counts, msgspec.Raw | list[Edge]]:
        return self.counts(), self._raw if self._items is None and self._raw is not None else self._list()


@dataclass
class FileState:
    sha: str
    committed_at: int
    language: str
    extraction: FileExtraction | None = None  # code files
    edges: Edges = field(default_factory=Edges)
    externals: list[External] = field(default_factory=list)
    lexical: list[int] = field(default_factory=list)  # token counts of its symbols' and chunks' search text
    chunks: int = 0
    sections: list[DocSection] = field(default_factory=list)  # docs
    mentions: list[tuple[str, str]] = field(default_factory=list)  # (doc id, symbol id)
    failed: str = ""  # the stage that fell back on it ("parse", "resolve"): the next run tries it again
    # the walk's ``stat_key`` of the file when this run read it: the next walk need not read it again
    stat: tuple[int, int, int, int, int] | None = None


@dataclass
class IndexState:
    fingerprint: str
    token: str = ""
    head: str = ""
    files: dict[str, FileState] = field(default_factory=dict)
    commits: dict[str, CommitRecord] = field(default_factory=dict)
    settings: dict[str, str] = field(default_factory=dict)  # what the fingerprint was made of, by name
    # stored without their vectors (``embed = "later"``, or a run stopped while embedding): the next
    # run that embeds computes them from the records above (cg/ingest/pipeline.py, fill_vectors)
    unembedded: list[str] = field(default_factory=list)  # file paths
    unembedded_commits: list[str] = field(default_factory=list)  # commit ids


@dataclass
class _Stored:
    """``IndexState`` as stored: the manifest, with the names of the shards that hold the files'
    records (see the module docstring) in place of the records."""

    fingerprint: str
    token: str = ""
    head: str = ""
    shards: list[str] = field(default_factory=list)
    commits: dict[str, CommitRecord] = field(default_factory=dict)
    settings: dict[str, str] = field(default_factory=dict)
    unembedded: list[str] = field(default_factory=list)
    unembedded_commits: list[str] = field(default_factory=list)


SHARDS = 256
_SHARD_NAME = re.compile(r"^[0-9a-f]{32}\.msgpack$")
_EDGES = msgspec.msgpack.Decoder(list[Edge])


@dataclass
class _StoredFile:
    """``FileState`` as stored: the edges left encoded behind their counts (see ``Edges``)."""

    sha: str
    committed_at: int
    language: str
    extraction: FileExtraction | None = None
    edges: tuple[Counts, msgspec.Raw] | None = None
    externals: list[External] = field(default_factory=list)
    lexical: list[int] = field(default_factory=list)
    chunks: int = 0
    sections: list[DocSection] = field(default_factory=list)
    mentions: list[tuple[str, str]] = field(default_factory=list)
    failed: str = ""
    stat: tuple[int, int, int, int, int] | None = None


_FILE = msgspec.msgpack.Decoder(_StoredFile)


def _loaded_file(raw: msgspec.Raw) -> FileState:
    s = _FILE.decode(raw)
    edges = Edges.stored(*s.edges) if s.edges is not None else Edges()
    return FileState(
        s.sha,
        s.committed_at,
        s.language,
        s.extraction,
        edges,
        s.externals,
        s.lexical,
        s.chunks,
        s.sections,
        s.mentions,
        s.failed,
        s.stat,
    )


def _encode_hook(value: object) -> object:
    if isinstance(value, Edges):
        return value.encode()
    raise NotImplementedError(f"cannot store {type(value).__name__}")


_ENCODER = msgspec.msgpack.Encoder(enc_hook=_encode_hook)
# a shard: path -> the record left encoded (``msgspec.Raw``), decoded one by one on load, and written
# back as the same bytes when a run leaves the record as it was loaded
_SHARD = msgspec.msgpack.Decoder(dict[str, msgspec.Raw])


def shard_of(path: str) -> int:
    """The shard a file's record lives in: a stable hash of its path (crc32: the same in every process)."""
    return zlib.crc32(path.encode("utf-8", "surrogateescape")) % SHARDS


def shard_dir(path: Path) -> Path:
    """The shards' folder beside the manifest: ``state-kuzu.msgpack`` -> ``state-kuzu/``."""
    return path.with_name(path.name.removesuffix(".msgpack"))


@dataclass
class _Loaded:
    """What ``load_state`` read, kept on the state (an attribute, not a field, so never stored): each
    record with the bytes it was decoded from, and each shard's file name."""

    records: dict[str, tuple[FileState, msgspec.Raw]] = field(default_factory=dict)
    shards: dict[int, str] = field(default_factory=dict)


def fingerprint(*parts: object) -> str:
    return hashlib.sha256("\x1f".join([STATE_VERSION, *map(str, parts)]).encode()).hexdigest()[:16]


def index_settings(settings: Settings, embedding: str = "") -> dict[str, str]:
    """The settings that shape what an index holds, by name, in fingerprint order: a change to any of
    them makes the next run full, and `cg status` names the ones that changed. ``embedding`` is the
    embedder's own key when the caller built it (the settings' variant otherwise)."""
    return {
        "schema": SCHEMA_VERSION,
        "resolver": settings.resolver,
        "chunk_tokens": str(settings.chunk_tokens),
        "embedding": embedding
        or embedding_key(settings.model, settings.embed_backend, settings.embed_precision, settings.embed_max_tokens),
        "embed_docstrings": str(settings.embed_docstrings),
        "max_file_bytes": str(settings.max_file_bytes),
        "max_calls_per_file": str(settings.max_calls_per_file),
        "max_chunks_per_file": str(settings.max_chunks_per_file),
        "history_commits": str(settings.history_commits),
    }


def state_path(index_dir: Path, backend: str) -> Path:
    return index_dir / f"state-{backend}.msgpack"


def load_state(path: Path) -> IndexState | None:
    """The saved state, or None when there is none, it cannot be read, or it does not match these
    classes field by field (then the run is full).

    Why MessagePack through msgspec and not pickle: ``.cg`` sits inside the repository, and a
    repository is untrusted input; unpickling a file it ships runs its code. msgspec decodes only
    plain data, checked against ``IndexState``'s types (a well-kept library: typed decoding of
    dataclasses, and about as fast as pickle on these records). A regular file only: a FIFO or a
    symbolic link named like the state is not opened."""
    data = read_regular(path)
    if data is None:
        return None
    loaded = _Loaded()
    files: dict[str, FileState] = {}
    folder = shard_dir(path)
    try:
        with _collector_paused():
            stored = msgspec.msgpack.decode(data, type=_Stored)
            for name in stored.shards:
                shard = read_regular(folder / name) if _SHARD_NAME.match(name) else None
                if shard is None:
                    return None  # a shard missing, or a name that is no shard of ours: start afresh
                for p, raw in _SHARD.decode(shard).items():
                    record = _loaded_file(raw)
                    files[p] = record
                    loaded.records[p] = (record, raw)
                    loaded.shards[shard_of(p)] = name
            gc.freeze()  # see _collector_paused; ``thaw`` undoes it
    except msgspec.DecodeError:
        return None
    state = IndexState(
        stored.fingerprint,
        stored.token,
        stored.head,
        files,
        stored.commits,
        stored.settings,
        stored.unembedded,
        stored.unembedded_commits,
    )
    state._loaded = loaded  # type: ignore[attr-defined]
    return state


@dataclass
class StateHeader:
    """What ``cg status`` reads of a saved state: whether the next run can build on it."""

    fingerprint: str
    token: str = ""
    settings: dict[str, str] = field(default_factory=dict)


def load_state_header(path: Path) -> StateHeader | None:
    """The saved state's fingerprint, token and settings, from the manifest alone (msgspec skips the
    fields ``StateHeader`` does not name)."""
    data = read_regular(path)
    try:
        return msgspec.msgpack.decode(data, type=StateHeader) if data is not None else None
    except msgspec.DecodeError:
        return None


def thaw() -> None:
    """Give the records ``load_state`` froze back to the cyclic collector: called when an index run
    ends, so a long-lived process (``cg watch``, ``cg mcp``) collects as usual between runs."""
    gc.unfreeze()


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while the state is decoded or encoded. Decoding
    allocates millions of records (Django: 158 MB of state), and each allocation burst set off
    collections that walked every record made so far: 1.7 of the 2.0 s the decode took, and none of
    it found garbage (the records hold no cycles). Restored as it was, so a caller that runs with the
    collector off keeps it off.

    The decoded records are then frozen (``gc.freeze``: kept out of every later collection) before the
    collector resumes: left young, they were walked by the next collections of the run all the same
    (Django's one-file edit: 7.5 s with the pause alone, 6.3 s with the freeze). They are plain
    records that refcounting frees; what the freeze could hold back is only cyclic garbage made
    before it, until ``thaw``."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def save_state(path: Path, state: IndexState) -> None:
    """The shards whose records changed, then the manifest, each written to a temporary file and
    renamed, so a crash leaves the old state or the new one (see the module docstring). A pickle a
    repository shipped under the old name is removed, never read."""
    folder = shard_dir(path)
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        folder.unlink()  # never follow what a repository shipped under the name: stale shards are removed below
    folder.mkdir(parents=True, exist_ok=True)
    loaded: _Loaded = getattr(state, "_loaded", None) or _Loaded()
    with _collector_paused():
        by_shard: dict[int, dict[str, msgspec.Raw]] = {}
        changed = {shard_of(p) for p in loaded.records if p not in state.files}  # a file gone
        for p, record in state.files.items():
            n = shard_of(p)
            before = loaded.records.get(p)
            # the very record that was loaded (records are replaced, never changed in place): its bytes
            if before is not None and before[0] is record:
                raw = before[1]
            else:
                raw = msgspec.Raw(_ENCODER.encode(record))
                changed.add(n)
            by_shard.setdefault(n, {})[p] = raw
        names: dict[int, str] = {}
        for n, records in sorted(by_shard.items()):
            kept = loaded.shards.get(n)
            if n not in changed and kept is not None and (folder / kept).is_file():
                names[n] = kept
                continue
            data = msgspec.msgpack.encode(dict(sorted(records.items())))
            names[n] = hashlib.sha256(data).hexdigest()[:32] + ".msgpack"
            _write_atomically(folder / names[n], data)
        stored = _Stored(
            state.fingerprint,
            state.token,
            state.head,
            list(names.values()),
            state.commits,
            state.settings,
            state.unembedded,
            state.unembedded_commits,
        )
        data = msgspec.msgpack.encode(stored)
    _write_atomically(path, data)
    loaded.shards = names  # a second save in the same run starts from these
    state._loaded = loaded  # type: ignore[attr-defined]
    listed = set(names.values())
    for entry in folder.iterdir():
        if entry.name not in listed:
            entry.unlink(missing_ok=True)
    for old in path.parent.glob("state-*.pickle"):
        old.unlink(missing_ok=True)


def _write_atomically(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def new_token() -> str:
    return uuid.uuid4().hex
