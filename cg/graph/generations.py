"""The embedded index on disk as generations: ``.cg/kuzu/<generation>/graph.kuzu`` and a pointer,
``.cg/kuzu/CURRENT``, naming the last complete one.

Why generations: Kùzu 0.11.3 cannot be trusted with a database a killed writer was writing (re-opening
it for writing segfaults and each later run loses more edges; tests/ingest/test_crash.py reproduces
it), and a reader must never see a half-written graph. So a writer never writes the database readers
open: it copies the current generation (an incremental run) or starts an empty one (a full run),
writes it, closes it, and only then switches the pointer by renaming a temporary file over it (one
atomic step). A crash at any instant leaves the pointer on the last complete generation; the next
writer removes the unfinished ones. An incremental run's copy is made and flushed to disk while the
run parses and resolves (``KuzuIndexStore._copy_current``). Readers open the generation the pointer
names, read-only, so a running ``cg index`` no longer locks queries out. Writers take turns through
an OS file lock (``flock``, released by the kernel when a writer dies, however it dies).

Why the pointer carries the generation directory's device and inode: ``.cg`` sits inside the
repository, and a repository is untrusted input (docs/architecture.md). A pointer and a generation
that arrive with a clone, a tarball or a ``git pull`` get inodes of the machine they land on, which
no one could write into the pointer beforehand; so cg opens only a database it created here, and an
old-layout ``.cg/graph.kuzu`` (an earlier cg's, or shipped) is never opened.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import secrets
import shutil
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from cg.graph.store import StoreError, WriterBusy

DB_NAME = "graph.kuzu"
LEXICON = "lexicon.sqlite"  # cg/graph/lexicon.py
POINTER = "CURRENT"
LOCK = "writer.lock"
_GENERATION = re.compile(r"^[0-9]{20}-[0-9a-f]{8}$")
_POINTER_MAX_BYTES = 256


class NoCompleteIndex(StoreError):
    """No generation was ever completed here (an interrupted first index, or none at all)."""


@dataclass(frozen=True)
class Generation:
    """One complete or staged generation: its name and its directory."""

    name: str
    path: Path

    @property
    def db(self) -> Path:
        return self.path / DB_NAME


class Generations:
    """The generation directory of one repository's embedded index: ``<index_dir>/kuzu``."""

    def __init__(self, index_dir: Path) -> None:
        self.index_dir = index_dir
        self.root = index_dir / "kuzu"

    # -- reading ---------------------------------------------------------------------------------
    def current(self) -> Generation | None:
        """The generation the pointer names, when the pointer is cg's own (see the module docstring)
        and names a real directory holding a database file; None otherwise."""
        if not _real_dir(self.root):
            return None
        text = _read_small(self.root / POINTER)
        if text is None:
            return None
        parts = text.split()
        if len(parts) != 2 or not _GENERATION.match(parts[0]):
            return None
        name, identity = parts
        path = self.root / name
        try:
            st = os.lstat(path)
            db = os.lstat(path / DB_NAME)
        except OSError:
            return None
        if not stat.S_ISDIR(st.st_mode) or not stat.S_ISREG(db.st_mode) or identity != _identity(st):
            return None
        return Generation(name, path)

    def missing_reason(self) -> str:
        """Why there is no current generation to read, in one line for a query to print."""
        repo = self.index_dir.parent
        if _real_dir(self.root) and (self.root / POINTER).exists():
            return f"the index in {repo} was not written by cg here (its pointer does not check); run `cg index`"
        if _real_dir(self.root) and any(_GENERATION.match(p.name) for p in self.root.iterdir()):
            return f"no complete index yet in {repo} (a run did not finish); run `cg index`"
        if (self.index_dir / DB_NAME).exists():
            return f"the index in {repo} was built by an older cg; run `cg index` to rebuild it"
        return f"no index in {repo}; run `cg index` first"

    # -- writing (under the lock) ------------------------------------------------------------------
    def prepare(self) -> None:
        """Make ``.cg/kuzu`` (refusing one that is not a real directory), remove what killed runs left
        and an old-layout database an earlier cg wrote straight into ``.cg``."""
        for old in (self.index_dir / DB_NAME, self.index_dir / f"{DB_NAME}.wal"):
            if old.is_file() and not old.is_symlink():
                old.unlink()
        self.sweep()

    def stage(self, copy_of: Generation | None) -> Generation:
        """A new generation directory: a copy of ``copy_of``'s database files, or empty."""
        name = f"{time.time_ns():020d}-{secrets.token_hex(4)}"
        staged = Generation(name, self.root / name)
        staged.path.mkdir()
        if copy_of is not None:  # the database, its write-ahead log, its full-text index (cg/graph/lexicon.py)
            for src in (copy_of.db, copy_of.db.with_name(f"{DB_NAME}.wal"), copy_of.path / LEXICON):
                if src.is_file():
                    shutil.copyfile(src, staged.path / src.name)  # a sendfile copy, in the kernel
        return staged

    def flush(self, staged: Generation) -> None:
        """Write ``staged``'s files and directory through to the disk (``fsync``)."""
        for f in staged.path.iterdir():
            _fsync(f)
        _fsync(staged.path)

    def switch(self, staged: Generation) -> None:
        """Make ``staged`` the current generation: its files flushed first, then the pointer renamed
        into place and the directory flushed, so a power cut leaves the old pointer or the new one."""
        self.flush(staged)
        tmp = self.root / f"{POINTER}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        try:
            os.write(fd, f"{staged.name} {_identity(os.lstat(staged.path))}\n".encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.root / POINTER)
        _fsync(self.root)
        self.sweep()

    def discard(self, staged: Generation) -> None:
        shutil.rmtree(staged.path, ignore_errors=True)

    def sweep(self) -> None:
        """Remove every generation but the current one (unfinished ones of killed runs, the ones a
        switch replaced) and stray pointer temporaries. A reader still holding an old one keeps its
        open file (POSIX unlink semantics) and the next reader opens the current one."""
        keep = self.current()
        for entry in self.root.iterdir():
            if entry.name.startswith(f"{POINTER}.") and entry.name.endswith(".tmp"):
                entry.unlink(missing_ok=True)
            elif _GENERATION.match(entry.name) and (keep is None or entry.name != keep.name):
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry, ignore_errors=True)
                else:
                    entry.unlink(missing_ok=True)

    def lock(self, wait: float) -> WriterLock:
        """The writers' lock, waited for up to ``wait`` seconds; a StoreError naming the holder's pid
        when another run keeps it longer. Makes ``.cg/kuzu``, refusing one that is not a real directory."""
        if self.root.is_symlink() or (self.root.exists() and not self.root.is_dir()):
            raise StoreError(f"{self.root} is not a directory cg made; remove it and run `cg index` again")
        self.root.mkdir(exist_ok=True)
        return WriterLock.acquire(self.root / LOCK, wait, self.index_dir.parent)


class WriterLock:
    """An exclusive ``flock`` on ``.cg/kuzu/writer.lock``, which holds the writer's pid. The kernel
    drops it when the process exits or is killed, so a crash never leaves a stale lock; the file is
    opened close-on-exec, so no worker process inherits it."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, path: Path, wait: float, repo: Path) -> WriterLock:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    os.close(fd)
                    raise
                if time.monotonic() >= deadline:
                    holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
                    os.close(fd)
                    raise WriterBusy(
                        f"another `cg index` (pid {holder}) is writing the index of {repo}; waited {wait:g}s,"
                        " try again when it has finished"
                    ) from None
                time.sleep(0.1)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return cls(fd)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None


def _identity(st: os.stat_result) -> str:
    return f"{st.st_dev}:{st.st_ino}"


def _real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _read_small(path: Path) -> str | None:
    """A small regular file's text (see ``read_regular``)."""
    data = read_regular(path, _POINTER_MAX_BYTES)
    return data.decode("ascii", "replace") if data is not None else None


def read_regular(path: Path, limit: int | None = None) -> bytes | None:
    """A regular file's bytes (the first ``limit`` of them), never following a symbolic link nor
    blocking on a FIFO: None for anything else or an error. For files under ``.cg``, which arrives
    with an untrusted repository."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return None
            return f.read() if limit is None else f.read(limit + 1)[:limit]
    except OSError:
        return None


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
