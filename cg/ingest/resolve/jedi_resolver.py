"""Precise Python resolution with jedi: every call site, import and base-class expression the
tree-sitter pass found is asked of jedi (``goto`` with imports followed; ``infer`` when ``goto``
lands on a variable or parameter), and the answer is mapped back to a definition by (path, line
of its name) or, outside the repository, kept as jedi's full name (``datetime.timedelta``).

jedi is static analysis: it never imports or runs the indexed code, and it needs none of the
project's dependencies (a library it cannot find simply yields no answer, and the name resolver
takes over). It is slow per site, so files are spread over worker processes, each holding one
``jedi.Project`` (its parse and inference caches are shared by every file that worker sees), and
each file has a time budget: a file over budget keeps the answers it got, the rest of its sites
fall back to name resolution, and the run summary names it.

Workers never outlive the run. Each asks the kernel for SIGKILL when its parent dies
(``PR_SET_PDEATHSIG`` on Linux) and runs a watchdog thread that exits once its parent is gone (the
parent id changes on re-parenting; this covers other systems and a parent that died before the
worker's first instruction). In the parent, an exception or SIGINT stops the workers at once
instead of waiting for the queued files, and SIGTERM stops them before the process dies of it as it
would have. With the workers gone, multiprocessing's resource tracker reads end-of-file on its pipe
and exits too.
"""

from __future__ import annotations

import atexit
import bisect
import ctypes
import ctypes.util
import functools
import os
import re
import signal
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

from cg.ingest.languages.registry import resolved_by_python
from cg.model import FileExtraction

# (line, column) -> answers; an answer is
# (full_name, repo-relative path or "", line of the name, type, name, column of the name in characters)
# (a lambda has no name: jedi gives the position of its ``lambda`` keyword, and that position is its identity)
Answer = tuple[str, str, int, str, str, int]
Position = tuple[int, int]
Query = tuple[int, int, bool]  # line, column, infer-only (the callee is an expression, not a name)
_CALLABLE = {"function", "class", "property"}
# Up to this many sites jedi runs in the calling process: starting workers (each importing jedi and
# loading the environment) costs about as much as a few hundred questions. Measured on requests with
# benchmarks/freshness.py: 161 sites took 5.9 s with two workers and 3.2 s in process, 238 sites
# about the same either way, 693 sites 6.3 s with workers and 9 s in process.
IN_PROCESS_SITES = 300
JEDI_PARAM_SEARCHES = 60  # jedi's cap on call sites read per dynamic parameter search (its default: 20)
# Sites whose expression's value is asked (``infer``), not the definition of its name (``goto``).
INFER_ONLY = frozenset({"value", "with", "iter", "next", "operator"})
_VALUES = _CALLABLE | {"instance"}  # an instance is called through its class's __call__


@dataclass
class JediReport:
    files: int = 0
    sites: int = 0
    answered: int = 0
    shared: int = 0  # calls not asked: another call of the same certain name was, and its answer holds
    workers: int = 0
    seconds: float = 0.0
    timed_out: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


@dataclass
class JediResults:
    answers: dict[str, dict[Position, list[Answer]]] = field(default_factory=dict)  # path -> position -> answers
    report: JediReport = field(default_factory=JediReport)

    def get(self, path: str, line: int, column: int) -> list[Answer] | None:
        return self.answers.get(path, {}).get((line, column))


class _Timeout(Exception):
    pass


_PROJECT = None
_ENVIRONMENT = None
_ROOT: Path | None = None


_CACHE_SLOT: str | None = None  # this process's own jedi cache folder, held (locked) for its life


def _own_cache_directory(default: str) -> str:
    """A jedi cache folder this process holds alone, under jedi's default one.

    jedi keeps parsed modules (parso pickles) in one cache folder per user. Two workers filling a
    cold cache at the same time read each other's half-written entries, and jedi then answers some
    call sites differently from run to run: three cold runs of the test fixture with two workers
    answered 657 to 658 of its sites, and one worker or a warm cache answered 662 every time. Each
    process takes the first free slot (``cg-slot-N``, an exclusive ``flock`` on its lock file, released
    when the process ends), so no two write the same folder and a slot stays warm across runs."""
    global _CACHE_SLOT
    if _CACHE_SLOT is not None:
        return _CACHE_SLOT
    try:
        import fcntl
    except ImportError:  # no flock: a private folder, cold each run but never shared
        _CACHE_SLOT = tempfile.mkdtemp(prefix="cg-jedi-")
        return _CACHE_SLOT
    for index in range(256):
        folder = Path(default) / f"cg-slot-{index}"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            handle = os.open(folder / ".lock", os.O_CREAT | os.O_RDWR, 0o600)
        except OSError:
            break
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(handle)
            continue
        _CACHE_SLOT = str(folder)  # the handle stays open: the lock lasts as long as the process
        return _CACHE_SLOT
    _CACHE_SLOT = tempfile.mkdtemp(prefix="cg-jedi-")
    return _CACHE_SLOT


_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
_WATCHDOG_SECONDS = 0.5


def die_with_parent(parent: int) -> None:
    """Make this worker process end when ``parent`` does: the kernel's parent-death signal where
    there is one, and a watchdog thread polling the parent id everywhere."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # the watchdog below still covers it, half a second later
    if os.getppid() != parent:  # the parent died before the signal was asked for
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_WATCHDOG_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="cg-parent-watchdog", daemon=True).start()


# (grammar, path) -> the cached parse whose lines were found to be the file's lines, by this process:
# one check per module and process, not one per Script that imports it (weak: parso may drop the tree)
_CHECKED: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _content_checked(load_module):
    """parso's ``load_module`` that returns a cached tree only when its lines are the file's lines.

    parso keeps parsed modules in memory and pickled on disk, and trusts one while the file's mtime is
    not newer than the cache entry. A file replaced by content with an older mtime (``cp -p``, ``tar
    x``, ``rsync -a``, an edit within the cache entry's second) then stays parsed as it was: jedi
    answers from the old tree, and its lines no longer hold the definitions (the shop's jedi edges
    turned into name guesses with a cache left from an earlier version of a file). Reading the file
    again costs a read and a split; parsing, which the cache saves, costs far more. Each tree is checked
    once per process (``_CHECKED``): the files do not change during a run, and a long-lived process
    forgets both the trees and the checks before the next one (``forget_parses``)."""
    import parso.cache
    from parso.utils import python_bytes_to_unicode, split_lines

    def checked(hashed_grammar, file_io, cache_path=None):
        try:
            node = load_module(hashed_grammar, file_io, cache_path=cache_path)
        except Exception:  # noqa: BLE001 - a truncated or foreign pickle: parse anew, write it whole
            with suppress(OSError):
                os.unlink(parso.cache._get_hashed_path(hashed_grammar, file_io.path, cache_path=cache_path))
            return None
        if node is None:
            return None
        item = parso.cache.parser_cache.get(hashed_grammar, {}).get(file_io.path)
        if item is not None and _CHECKED.get((hashed_grammar, file_io.path)) is item:
            return node  # checked against the file earlier in this process
        try:
            lines = split_lines(python_bytes_to_unicode(file_io.read()), keepends=True)
        except (OSError, UnicodeDecodeError):
            return None
        if item is None or item.lines != lines:
            parso.cache.parser_cache.get(hashed_grammar, {}).pop(file_io.path, None)
            return None  # parsed anew, and saved over the stale entry
        _CHECKED[(hashed_grammar, file_io.path)] = item
        return node

    checked.content_checked = True
    return checked


def _save_whole(hashed_grammar, path, item, cache_path=None) -> None:
    """parso's cache write, made atomic: pickled into a temporary file beside the entry, then renamed
    over it. parso opened the entry itself and pickled into it, so a worker killed mid-write (Ctrl-C,
    SIGKILL, out of memory) left a truncated entry, and every later run lost jedi's answers at the calls
    into that module (EOFError inside jedi, caught one site at a time: silently fewer edges)."""
    import pickle

    import parso.cache

    target = parso.cache._get_hashed_path(hashed_grammar, path, cache_path=cache_path)
    handle, temporary = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".cg-", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            pickle.dump(item, out, pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, target)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary)
        raise


def name_of_position(node, position: tuple[int, int]):
    """The name leaf at ``position`` under ``node``, as parso's ``get_name_of_position`` finds it, but
    descending only into the children whose span holds the position.

    jedi calls ``get_name_of_position`` on the module for every ``goto`` and ``infer``, and parso's
    version walks the whole tree depth first until it meets the name: one question cost a walk of the
    file's tree, so a file's questions cost its size times their number (sqlparse: 2.3M node visits for
    2,125 questions, 15% of jedi's time; Django's big modules far more). A leaf lies within its parent's
    span (a node starts at its first child and ends at its last), so a child whose span does not hold
    the position holds no name that does; children are in source order, so the first one that can is
    found by bisection on their ends. Leaves may touch (``print(`` ends ``print`` where ``(`` starts):
    the children are still tried in order from there, so the same leaf wins as in the full search, which
    tests/ingest/test_jedi.py checks at every leaf boundary of real modules."""
    children = node.children
    index = bisect.bisect_left(children, position, key=_end_pos) if len(children) > 4 else 0
    for at in range(index, len(children)):
        child = children[at]
        if child.start_pos > position:
            return None
        if child.end_pos < position:
            continue
        if not hasattr(child, "children"):  # a leaf
            if child.type == "name":
                return child
        else:
            found = name_of_position(child, position)
            if found is not None:
                return found
    return None


def _end_pos(element) -> tuple[int, int]:
    return element.end_pos


PARSO_NAME_OF_POSITION = None  # parso's own lookup, kept once replaced (the equivalence test compares them)


def install_name_lookup() -> None:
    """Give parso's trees ``name_of_position`` for ``get_name_of_position`` in this process."""
    global PARSO_NAME_OF_POSITION
    from parso.python.tree import PythonMixin

    if PythonMixin.get_name_of_position is not name_of_position:
        PARSO_NAME_OF_POSITION = PythonMixin.get_name_of_position
        PythonMixin.get_name_of_position = name_of_position  # type: ignore[method-assign]


# jedi's search for a function's call sites (to infer its parameters) reads the project's files for its
# name. Both caches below live as long as this process's view of the tree: `forget_parses` empties them.
_PROJECT_FILES: dict[str, list] = {}  # project folder -> jedi's file listing of it, in jedi's walk order
_FIRST_TWO_LINES = re.compile(rb"(?:[^\r\n]*(?:\r\n|\r|\n)){0,2}")  # as parso reads a coding declaration
_CODING = re.compile(rb"coding[=:]")


@functools.lru_cache(maxsize=4096)
def _bytes_pattern(pattern: str) -> re.Pattern[bytes]:
    return re.compile(pattern.encode("ascii"))


def _find_project_modules(inference_state, module_contexts):
    """jedi's ``_find_project_modules`` (the project's Python files but the searching modules' own, in
    walk order), with the walk done once per process instead of once per search: the tree does not
    change while jedi runs, and the walk (with .gitignore reads) cost as much as the reads it feeds."""
    from jedi.file_io import FolderIO
    from jedi.inference.references import recurse_find_python_files

    root = str(inference_state.project.path)
    listing = _PROJECT_FILES.get(root)
    if listing is None:
        listing = _PROJECT_FILES[root] = list(recurse_find_python_files(FolderIO(root)))
    skipped = {m.py__file__() for m in module_contexts}
    for file_io in listing:
        if file_io.path not in skipped:
            yield file_io


def cannot_hold(raw: bytes, pattern: str) -> bool:
    """True when a file with these bytes, decoded as parso decodes it, has no match of ``pattern`` (a
    ``\\bname\\b`` pattern): only decided for an ASCII pattern in a file without a coding declaration
    (UTF-8); False means "look at the text"."""
    if not pattern.isascii():
        return False
    head = _FIRST_TWO_LINES.match(raw)
    if head is not None and _CODING.search(head.group(0)) is not None:
        return False
    return _bytes_pattern(pattern).search(raw) is None


def _checked_fs(check_fs):
    """jedi's ``_check_fs`` (does this file hold the searched name? then its module), answering "no"
    without decoding the file when its bytes cannot hold the name. jedi decodes every file it looks at
    (detecting a PEP 263 declaration first) and runs ``\\bname\\b`` on the text: on sqlparse that was
    4,848 decodes for 126 files that held the name. For a UTF-8 file (no coding declaration) and an ASCII
    name, the same pattern on the bytes is a necessary condition: the name's characters are the same
    bytes, and a character that is not a word character before or after it is either ASCII (the same
    byte) or encoded in bytes >= 0x80, which are not word characters to a bytes pattern. So a miss on the
    bytes is a miss on the text, and a hit goes to jedi's own check, which decides."""

    def checked_fs(inference_state, file_io, regex):
        try:
            if cannot_hold(file_io.read(), regex.pattern):
                return None
        except FileNotFoundError:
            return None
        return check_fs(inference_state, file_io, regex)

    checked_fs.cg_checked = True
    return checked_fs


def forget_parses() -> None:
    """Forget what this process parsed and found of the tree (a long-lived process, before a new run):
    parso's trees, which trust a file's mtime that an edit within the same second does not change, the
    trees checked against their files, and the file listings of the call-site search."""
    import parso.cache

    parso.cache.parser_cache.clear()
    _CHECKED.clear()
    _PROJECT_FILES.clear()
    _relative_to.cache_clear()  # a folder may have become a symbolic link since


def _exit_now() -> None:
    """A pool worker's last step once the pool lets it go: end the process without tearing down what
    it parsed and inferred. Python frees every object at exit, and a worker holds jedi's and parso's
    trees of every module it saw: on sqlparse the pool's shutdown waited 2.1 s for that after the last
    file's answers were in (the run's whole jedi stage was 9.3 s). Everything a worker produces has
    been sent by then (results go through the pool's pipe as each file ends, parso's cache entries are
    written whole, the cache folder's lock is the kernel's to release), so nothing is lost."""
    for stream in (sys.stdout, sys.stderr):
        with suppress(Exception):
            stream.flush()
    os._exit(0)


def _init_worker(root: str, parent: int | None = None) -> None:
    global _PROJECT, _ENVIRONMENT, _ROOT
    import jedi
    import parso.grammar
    from jedi.inference import dynamic_params

    install_name_lookup()
    if not getattr(parso.grammar.load_module, "content_checked", False):
        parso.grammar.load_module = _content_checked(parso.grammar.load_module)
        parso.cache._save_to_file_system = _save_whole
    from jedi.inference import references

    if not getattr(references._check_fs, "cg_checked", False):
        references._check_fs = _checked_fs(references._check_fs)
        references._find_project_modules = _find_project_modules

    if parent is not None:  # a pool worker
        die_with_parent(parent)
        atexit.register(_exit_now)

    jedi.settings.cache_directory = _own_cache_directory(jedi.settings.cache_directory)
    # jedi finds a parameter's values from the function's call sites (``_group(tlist, cls, match)``
    # passes ``match``), but stops after MAX_PARAM_SEARCHES / depth names in a module and caches the
    # cut list for the whole Script: a search first made inside another one (depth 2) sees 10 names,
    # so sqlparse's ``_group`` saw 6 of the 11 functions its callers pass. 60 finds them all; on
    # flask and sqlparse (tests included) the time stayed within the run-to-run noise
    # (benchmarks/jedi_time.py measures it against the earlier resolver).
    dynamic_params.MAX_PARAM_SEARCHES = JEDI_PARAM_SEARCHES

    # the worker's own interpreter answers questions about compiled (stdlib) modules: no extra
    # subprocess per worker, nothing of the indexed project is imported
    _ENVIRONMENT = jedi.InterpreterEnvironment()
    # resolved: jedi reports module paths with symlinks resolved, so a root reached through a symlink
    # must be resolved too, or no answer would map into the repository
    _ROOT = Path(root).resolve()
    # The repository's own folders come before every installed package: indexing click's sources
    # must resolve `import click` to them, not to a click that happens to be installed beside cg.
    own = [str(_ROOT / "src")] if (_ROOT / "src").is_dir() else []
    own.append(str(_ROOT))
    _PROJECT = jedi.Project(
        root, sys_path=own + [p for p in _ENVIRONMENT.get_sys_path() if p not in own], load_unsafe_extensions=False
    )


def _on_alarm(signum, frame):  # noqa: ARG001
    raise _Timeout


def _relative(module_path) -> str:
    if module_path is None or _ROOT is None:
        return ""
    return _relative_to(str(module_path), _ROOT)


@functools.lru_cache(maxsize=65536)
def _relative_to(module_path: str, root: Path) -> str:
    """``module_path`` relative to ``root`` with symlinks resolved ("" outside it): asked for every
    answer, of a few hundred modules, and resolving a path costs a system call per component."""
    try:
        return Path(module_path).resolve().relative_to(root).as_posix()
    except ValueError:
        return ""


def _describe(names) -> list[Answer]:
    out: list[Answer] = []
    for name in names:
        full = name.full_name or name.name
        out.append(
            (full, _relative(name.module_path), int(name.line or 0), name.type, name.name, int(name.column or 0))
        )
    return out


def resolve_file(task: tuple[str, str, list[Query], float]) -> tuple[str, dict[Position, list[Answer]], str]:
    """Worker entry point: ask jedi about every position in one file within ``budget`` seconds.
    Returns (path, answers, status) with status ``ok``, ``timeout`` or ``error: ...``."""
    import jedi

    path, abspath, positions, budget = task
    answers: dict[Position, list[Answer]] = {}
    status = "ok"
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, budget)
            source = Path(abspath).read_text("utf-8")
            script = jedi.Script(source, path=abspath, project=_PROJECT, environment=_ENVIRONMENT)
            raw_lines = source.encode("utf-8").splitlines()
            for line, column, infer_only in positions:
                # tree-sitter counts bytes, jedi counts characters: they differ after any non-ASCII text
                prefix = raw_lines[line - 1][:column] if line <= len(raw_lines) else b""
                char_column = len(prefix.decode("utf-8", "replace"))
                try:
                    described = []
                    if not infer_only:
                        found = script.goto(line, char_column, follow_imports=True, follow_builtin_imports=True)
                        described = _describe(found)
                    if not any(answer[3] in _CALLABLE or answer[3] == "module" for answer in described):
                        inferred = [n for n in script.infer(line, char_column) if n.type in _VALUES]
                        if inferred:
                            described = _describe(inferred)
                    elif any(answer[3] == "statement" for answer in described):
                        # a def on one branch and `name = other` on another (`batched = _batched` before
                        # 3.13): the call may run either, so the assignment's value counts too
                        inferred = [n for n in script.infer(line, char_column) if n.type in _VALUES]
                        described += [a for a in _describe(inferred) if a not in described]
                except _Timeout:
                    raise
                except Exception:  # noqa: BLE001 - one odd site must not cost the file's other answers
                    continue
                if described:
                    answers[(line, column)] = described
        finally:  # the alarm may fire even here: the outer handler still catches it
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _Timeout:
        status = "timeout"
    except Exception as exc:  # noqa: BLE001 - jedi can fail on odd code; the name resolver takes over
        status = f"error: {type(exc).__name__}: {exc}"
    finally:
        signal.signal(signal.SIGALRM, previous)
    return path, answers, status


_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
# The dunders without which a protocol site (`for`, `with`, `next()`) can have no edge: a repository
# whose classes define none of them asks jedi about none of its loops.
PROTOCOL_DUNDERS = {"iter": ("__iter__", "__next__"), "with": ("__enter__", "__exit__"), "next": ("__next__",)}
# Builtins whose result is always a builtin object (the constructors of builtin types, predicates,
# len/range/enumerate/zip ...): `for i, row in enumerate(rows)` or `len(rows) + 1` runs nothing of the
# repository when the name is the builtin (certain in the file). Left out: iter, next, reversed, min,
# max, sum, abs, round, getattr, type, super: their result can be a repository object.
BUILTIN_RESULTS = frozenset(
    "bool bytearray bytes callable chr dict dir divmod enumerate filter float format frozenset hasattr "
    "hash hex id int isinstance issubclass len list map oct open ord range repr set slice sorted str "
    "tuple zip".split()
)
_BUILTIN_CALL = re.compile(r"([A-Za-z_]\w*)\(\)")


def shared_sites(ex: FileExtraction) -> dict[Position, Position]:
    """Calls whose answer is another call's: the same plain name or dotted chain (``invoice_total``,
    ``mi.chunked``), headed by a name that means the same at every place of the file
    (``FileExtraction.certain_names``), map to the first such call. jedi is asked there only; its answer
    stands for the rest (a chain through a call, ``make(a).run``, is asked each time: jedi may infer a
    return from the arguments)."""
    if not ex.certain_names:
        return {}
    first: dict[str, Position] = {}
    shared: dict[Position, Position] = {}
    for call in ex.calls:
        if call.via != "call" or not _DOTTED.fullmatch(call.callee):
            continue
        if call.callee.split(".", 1)[0] not in ex.certain_names:
            continue
        position = (call.line, call.column)
        earlier = first.setdefault(call.callee, position)
        if earlier != position:
            shared[position] = earlier
    return shared


def positions_of(
    ex: FileExtraction, names: frozenset[str], shared: dict[Position, Position] | None = None
) -> list[Query]:
    """Every place in the file jedi is asked about: call sites, imported names, base classes, attribute
    reads whose name is a property somewhere in the repository, and operands of operators whose dunder
    some repository class defines (``names`` holds both: cg/ingest/resolve/python.py ``jedi_names``);
    an ``a + b`` in a repository without ``__add__`` costs nothing, nor does a ``for`` loop in one
    without ``__iter__``/``__next__`` (``PROTOCOL_DUNDERS``), nor an operand that is a certain builtin's
    own object (``BUILTIN_RESULTS``). A call whose answer another call of the file gives is not asked
    (``shared_sites``, computed here unless the caller already has it)."""
    seen: dict[Position, bool] = {}
    operands: list[Position] = []
    shared = shared_sites(ex) if shared is None else shared
    for call in ex.calls:
        if (call.line, call.column) in shared:
            continue  # another call of the same certain name is asked (run_jedi copies its answer here)
        if call.via in PROTOCOL_DUNDERS or call.via == "operator":
            built = _BUILTIN_CALL.fullmatch(call.callee)
            if built is not None and built.group(1) in BUILTIN_RESULTS and built.group(1) in ex.certain_names:
                continue  # `for row in enumerate(rows)`: a builtin's own object
        if call.via in PROTOCOL_DUNDERS and not any(name in names for name in PROTOCOL_DUNDERS[call.via]):
            continue
        if call.via == "operator":
            if any(name in names for name in call.protocol.split()):
                operands.append((call.line, call.column))
            continue
        seen[(call.line, call.column)] = call.via in INFER_ONLY
    for imp in ex.imports:
        if imp.name != "*":
            seen.setdefault((imp.line, imp.column), False)
    for base in ex.bases:
        seen.setdefault((base.line, base.column), False)
    for read in ex.attribute_reads:
        if read.attr in names:
            seen.setdefault((read.line, read.column), False)
    # Operands last. jedi caches what it finds for a parameter per Script, and a search it starts from
    # inside another inference is cut short (MAX_PARAM_SEARCHES / depth): asked first, `if prev_ and
    # valid_next(next_)` made sqlparse's `_group` forget 10 of the functions its callers pass as `post`
    # (executed-edge recall 0.902 -> 0.866). The calls are what the graph stands on; they go first.
    for position in operands:
        seen.setdefault(position, True)
    return [(line, column, infer_only) for (line, column), infer_only in seen.items()]


def run_jedi(
    root: Path,
    extractions: list[FileExtraction],
    names: frozenset[str],
    workers: int,
    budget: float,
    progress=None,
) -> JediResults:
    """Resolve every file's positions with jedi in ``workers`` processes (0 = one per core)."""
    results = JediResults()
    report = results.report
    tasks = []
    shared: dict[str, dict[Position, Position]] = {}
    for ex in extractions:
        if not resolved_by_python(ex.file.language):
            continue
        shared[ex.file.path] = shared_sites(ex)
        positions = positions_of(ex, names, shared[ex.file.path])
        if positions:
            tasks.append((ex.file.path, str(root / ex.file.path), positions, budget))
    report.files = len(tasks)
    report.sites = sum(len(t[2]) for t in tasks)
    if not tasks:
        return results
    # big files first, so one slow file does not finish alone at the end
    tasks.sort(key=lambda t: -len(t[2]))
    count = workers or os.cpu_count() or 1
    count = max(1, min(count, len(tasks)))
    started = time.perf_counter()
    # in process only on the main thread: a file's time budget is a SIGALRM timer, which Python lets only
    # the main thread set (a server indexing on a worker thread, as `cg mcp` does, takes the pool path)
    if report.sites <= IN_PROCESS_SITES and threading.current_thread() is threading.main_thread():
        forget_parses()
        _init_worker(str(root))
        report.workers = 0
        _collect(results, map(resolve_file, tasks), progress, shared)
        report.seconds = time.perf_counter() - started
        return results
    report.workers = count
    context = get_context("spawn")  # no fork of a process that may hold torch or a database
    pool = ProcessPoolExecutor(
        max_workers=count, mp_context=context, initializer=_init_worker, initargs=(str(root), os.getpid())
    )
    try:
        with _stop_on_sigterm(pool):
            _collect(results, pool.map(resolve_file, tasks, chunksize=1), progress, shared)
    except BrokenProcessPool:  # a worker died (out of memory, a crash in a C extension): names take over
        stop_workers(pool)
        report.failed.extend(
            f"{t[0]}: a jedi worker died; resolved by name" for t in tasks if t[0] not in results.answers
        )
    except BaseException:
        stop_workers(pool)
        raise
    pool.shutdown()
    report.seconds = time.perf_counter() - started
    return results


def stop_workers(pool: ProcessPoolExecutor) -> None:
    """Kill the pool's workers now and drop the queued files (``shutdown`` alone would wait for them).
    The worker table is private in Python 3.11 (3.14 has ``terminate_workers``), and ``shutdown``
    empties it: it is read first (read after, it was None, nothing was killed, and Ctrl-C waited for
    each worker's file to finish, up to its whole time budget)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.kill()
    for process in processes:
        process.join(timeout=5)


@contextmanager
def _stop_on_sigterm(pool: ProcessPoolExecutor) -> Iterator[None]:
    """While the pool runs, SIGTERM first kills its workers, then ends this process by the signal's
    previous disposition (by default: dies of SIGTERM, as it would have without a pool)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set a handler; the workers' watchdogs still cover a kill
        return
    previous = signal.getsignal(signal.SIGTERM)

    def on_term(signum, frame) -> None:
        stop_workers(pool)
        signal.signal(signal.SIGTERM, previous)
        if callable(previous):
            previous(signum, frame)
        else:
            signal.raise_signal(signum)

    signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _collect(results: JediResults, outcomes, progress, shared: dict[str, dict[Position, Position]]) -> None:
    report = results.report
    for path, answers, status in outcomes:
        results.answers[path] = answers
        report.answered += len(answers)
        for repeat, first in shared.get(path, {}).items():
            if first in answers:
                answers[repeat] = answers[first]
                report.shared += 1
        if status == "timeout":
            report.timed_out.append(path)
        elif status != "ok":
            report.failed.append(f"{path}: {status}")
        if progress is not None:
            progress(1)
