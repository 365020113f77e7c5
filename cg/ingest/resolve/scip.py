"""The precise pass: a language's own compiler says what each call names, through a SCIP index.

For TypeScript and JavaScript the indexer is ``scip-typescript`` (Sourcegraph's, on the TypeScript
compiler, run on Node.js); for Go it is ``scip-go`` (on Go's own type checker, go/packages). Each is
used when it is installed, and the generic resolver (cg/ingest/resolve/generic.py) stays the fallback
for every site it has no answer for. The answers are read as occurrences: a reference at the position
of a call's last name (``charge`` in ``this.gateway.charge(...)``) names a symbol, and the symbol's
definition occurrence names a file and a line, which is a definition cg extracted there
(``Target.how = "scip"``), or a named external outside the repository (the TypeScript library, an npm
package, Go's standard library or a module dependency).

Why it is safe to run on an untrusted repository: the TypeScript compiler reads the project's sources,
its tsconfig.json and the declaration files they reach; nothing from the repository is executed (no
package scripts, no compiler plugins: those load only in an editor's language server). Go's type
checker reads the module's sources through ``go list``, which cg runs with the network, toolchain
switching, cgo, workspaces and version stamping off (``GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=0
GOWORK=off GOFLAGS=-mod=readonly -buildvcs=false``), so nothing is downloaded, no C compiler runs
on the repository's code, ``go.mod`` and ``go.sum`` are never rewritten, and git is not asked about
the repository (its configuration can name programs). cg never lets an indexer write into the
repository: the index goes to a temporary directory, and ``--infer-tsconfig`` (which writes a
tsconfig.json beside the sources) is never passed; the files no tsconfig.json covers are indexed
through a tsconfig cg writes in that temporary directory instead. A run has a time limit
(``precise_timeout``) and its own process group, so a hang is killed whole, and any failure (no Node or
Go indexer, a crash, a timeout, an index that does not parse) leaves every site to the generic
resolver and is named in the run's summary. Which program runs is never the repository's to say (the
settings that name one are refused in its cg.toml). Symbols from an indexer are data: parsed, never
evaluated; paths outside the walked files are ignored.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import shutil
import signal
import string
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

import json5
from google.protobuf.message import DecodeError

from cg.errors import stop_if_interrupted
from cg.ingest.resolve.scip_schema import DEFINITION, UTF8, UTF16, parse_index

_MAX_INDEX_BYTES = 2_000_000_000  # an index file past this is not read (a runaway indexer)
_IDENTIFIER_CHARS = frozenset("_+-$" + string.ascii_letters + string.digits)  # SCIP's simple identifier
# The compiler options for files no tsconfig.json covers: modern syntax and the module resolution of
# today's bundlers (extensionless and `.js` specifiers that name a `.ts` file), JavaScript read but not
# type-checked, nothing emitted.
LOOSE_OPTIONS = {
    "target": "ES2022",
    "module": "ESNext",
    "moduleResolution": "Bundler",
    "jsx": "preserve",
    "allowJs": True,
    "checkJs": False,
    "noEmit": True,
    "skipLibCheck": True,
}
_CONSTRUCTOR = "`<constructor>`()."  # scip-typescript's descriptor of a class's constructor
_TYPESCRIPT_LIB = "typescript"  # the npm package whose lib/*.d.ts declare the language's builtins
_GO_MOD = "go.mod"
# What `go list` may not do while scip-go loads a module: fetch, switch toolchains, run cgo (a C
# compiler on the repository's files), read a go.work beside it, rewrite go.mod, ask git.
_GO_ENV = {
    "GOPROXY": "off",
    "GOTOOLCHAIN": "local",
    "CGO_ENABLED": "0",
    "GOWORK": "off",
    "GOFLAGS": "-mod=readonly -buildvcs=false",
    "GIT_DIR": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


@dataclass(frozen=True)
class Answer:
    """What the compiler says the name at one position refers to: a definition in the repository
    (``path`` and the 1-based ``line`` of its name, ``name``) or an external (``external``, dotted)."""

    name: str
    path: str = ""
    line: int = 0
    external: str = ""
    constructor: int = 0  # for a `new` of a class: the line of the constructor the compiler chose, if it says


# answers by repository-relative path, then (1-based line, byte column) of the referring name
Answers = dict[str, dict[tuple[int, int], tuple[Answer, ...]]]


@dataclass
class PreciseReport:
    """Per language: the indexer's outcome, for the run's summary (``precise``)."""

    languages: dict[str, str] = field(default_factory=dict)  # language -> "scip-typescript: 12 of 12 files" / why not
    seconds: float = 0.0


@dataclass
class PreciseResults:
    """Answers by repository-relative path, then (line, byte column) of the referring name: one, or
    several where the compiler binds the name to several declarations (a function declared in two
    script files that share the global scope)."""

    answers: Answers = field(default_factory=dict)
    report: PreciseReport = field(default_factory=PreciseReport)

    def get(self, path: str, line: int, column: int) -> tuple[Answer, ...]:
        return self.answers.get(path, {}).get((line, column), ())


# -- the indexers --------------------------------------------------------------------------------
# An indexer run: (repository root, the paths to answer, the command, seconds left, the repository's
# other files in its languages) -> the indexes it wrote, each as (the directory its document paths are
# relative to, its bytes), or None and why not.
Run = Callable[[Path, list[str], list[str], float, list[str]], tuple[list[tuple[str, bytes]] | None, str]]
# Reading what an indexer wrote: (its output, the paths to answer, a file's bytes by path, the indexer,
# the directory its paths are relative to) -> answers (read_index for SCIP, read_java for cg-javaparser)
Reader = Callable[[bytes, set[str], Callable[[str], bytes | None], "Indexer | None", str], Answers]


@dataclass(frozen=True)
class Indexer:
    name: str  # the program's name, on PATH
    languages: tuple[str, ...]  # cg's language names it answers for
    setting: str  # the setting (and CG_ variable) that names the program instead
    install: str  # how to get it, for the summary when it is missing
    encoding: int  # how its columns count when a document does not say (scip_schema.UTF8/UTF16)
    run: Run
    external: Callable[[str, list[tuple[str, str]]], str]  # a symbol outside the repository, named
    read: Reader | None = None  # how its output becomes answers, when it writes no SCIP index


# -- the indexer ---------------------------------------------------------------------------------
def find_indexer(indexer: Indexer, configured: str) -> tuple[list[str] | None, str]:
    """The command that runs ``indexer``, or None and why not: ``configured`` (its setting, a path)
    first, then the program on PATH. A Node script (scip-typescript's npm package) runs with the
    ``node`` on PATH, so a missing Node says so by name."""
    exe = configured or shutil.which(indexer.name) or ""
    if not exe:
        return None, f"{indexer.name} not found ({indexer.install})"
    path = Path(exe).absolute()  # the indexer runs in a temporary directory
    try:
        with path.open("rb") as handle:
            first = handle.readline(256)
    except OSError:
        return None, f"{indexer.name} not found at {exe}"
    if not (path.suffix in (".js", ".cjs", ".mjs") or (first.startswith(b"#!") and b"node" in first)):
        return [str(path)], ""  # a wrapper of its own
    node = shutil.which("node")
    if node is None:
        return None, "Node.js (node) not on PATH"
    return [node, str(path)], ""


def project_dirs(
    repo: Path, paths: Iterable[str], marker: str, holds: Callable[[str, str], bool] | None = None
) -> tuple[list[str], list[str]]:
    """The directories (repository-relative, "" for the root) whose ``marker`` (tsconfig.json, go.mod)
    covers ``paths`` (the nearest one above each file, a regular file inside the repository, that
    ``holds(directory, path)`` the file when given), and the files none covers."""
    root = repo.resolve()
    known: dict[str, bool] = {}

    def has_project(directory: str) -> bool:
        if directory not in known:
            known[directory] = _regular_inside(root, posixpath.join(directory, marker))
        return known[directory]

    projects: set[str] = set()
    loose: list[str] = []
    for path in paths:
        directory = posixpath.dirname(path)
        while True:
            if has_project(directory) and (holds is None or holds(directory, path)):
                projects.add(directory)
                break
            if not directory:
                loose.append(path)
                break
            directory = posixpath.dirname(directory)
    return sorted(projects), sorted(loose)


# -- which tsconfig.json answers for a file ---------------------------------------------------------
# A checkout often has a tsconfig.json the compiler cannot use as it is, or one that leaves files out:
# ky's extends "@sindresorhus/tsconfig", a package a fresh clone has not installed (the TypeScript
# compiler then stops with TS6053 and indexes nothing), and includes only "source", so its tests sit
# under the tsconfig but outside its program. Such files are indexed as loose files instead (through
# cg's own tsconfig, LOOSE_OPTIONS), so the compiler still answers for them.
_TS_DEFAULT_EXCLUDE = ("node_modules", "bower_components", "jspm_packages")
_JS_EXTENSIONS = (".js", ".jsx", ".mjs", ".cjs")
_MAX_EXTENDS = 8  # a longer chain of extended configs is not followed (and the project goes loose)


@dataclass(frozen=True)
class _TsProject:
    """What cg needs of a tsconfig.json: whether the compiler can load it, and which files it holds."""

    usable: bool
    files: frozenset[str] = frozenset()  # repository-relative paths named in "files"
    include: tuple[re.Pattern[str], ...] = ()
    exclude: tuple[re.Pattern[str], ...] = ()
    allow_js: bool = False

    def covers(self, path: str) -> bool:
        if not self.usable:
            return False
        if path.endswith(_JS_EXTENSIONS) and not self.allow_js:
            return False
        if path in self.files:
            return True
        return any(p.match(path) for p in self.include) and not any(p.match(path) for p in self.exclude)


def typescript_projects(repo: Path, paths: Iterable[str]) -> tuple[list[str], list[str]]:
    """The directories (repository-relative, "" for the root) whose tsconfig.json answers for
    ``paths``, and the files none answers for (indexed together as loose files). A file belongs to
    the nearest tsconfig.json above it that the compiler can load (it parses, and what it extends is
    there) and whose program holds it ("files", "include" and "exclude" as TypeScript reads them,
    JavaScript only with allowJs)."""
    root = repo.resolve()
    configs: dict[str, _TsProject] = {}

    def holds(directory: str, path: str) -> bool:
        if directory not in configs:
            configs[directory] = _read_tsconfig(root, directory)
        return configs[directory].covers(path)

    return project_dirs(root, paths, "tsconfig.json", holds)


def _read_tsconfig(root: Path, directory: str) -> _TsProject:
    """The tsconfig.json of ``directory`` as the compiler would load it, with "files", "include",
    "exclude" and allowJs taken from it or, where it does not set them, from the configs it extends."""
    chain = _config_chain(root / directory / "tsconfig.json", 0)
    if chain is None:
        return _TsProject(usable=False)
    allow_js = next(
        (bool(c["compilerOptions"]["allowJs"]) for _, c in chain if "allowJs" in c["compilerOptions"]), False
    )
    out_dir = next(
        (
            posixpath.normpath(posixpath.join(d, c["compilerOptions"]["outDir"]))
            for d, c in chain
            if isinstance(c["compilerOptions"].get("outDir"), str)
        ),
        "",
    )

    def setting(key: str) -> tuple[str, list[str]] | None:
        for where, config in chain:
            value = config.get(key)
            if isinstance(value, list):
                return where, [v for v in value if isinstance(v, str)]
        return None

    files = setting("files")
    include = setting("include") or (None if files else (str(root / directory), ["**/*"]))
    exclude = setting("exclude") or (str(root / directory), [*_TS_DEFAULT_EXCLUDE, *([out_dir] if out_dir else [])])

    def inside(found: tuple[str, list[str]] | None) -> list[str]:
        """A setting's paths made repository-relative; those outside the repository left out."""
        where, patterns = found or ("", [])
        out = []
        for pattern in patterns:
            rel = posixpath.relpath(posixpath.normpath(posixpath.join(where, pattern)), str(root))
            if rel != ".." and not rel.startswith("../"):
                out.append("" if rel == "." else rel)
        return out

    return _TsProject(
        usable=True,
        files=frozenset(inside(files)),
        include=tuple(_ts_glob(p, True) for p in inside(include)),
        exclude=tuple(_ts_glob(p, False) for p in inside(exclude)),
        allow_js=allow_js,
    )


def _config_chain(path: Path, depth: int) -> list[tuple[str, dict]] | None:
    """``path`` parsed (JSON with comments and trailing commas, as tsconfig files are written; read
    with json5) and every config it extends, nearest first, each with the directory its paths are
    relative to; None when one does not parse or what it extends is not there."""
    try:
        config = json5.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(config, dict):
        return None
    options = config.get("compilerOptions")
    config["compilerOptions"] = options if isinstance(options, dict) else {}
    chain = [(str(path.parent), config)]
    extends = config.get("extends")
    for spec in [extends] if isinstance(extends, str) else extends if isinstance(extends, list) else []:
        base = _extended(path.parent, spec) if isinstance(spec, str) else None
        rest = _config_chain(base, depth + 1) if base is not None and depth < _MAX_EXTENDS else None
        if rest is None:
            return None
        chain += rest
    return chain


def _extended(directory: Path, spec: str) -> Path | None:
    """The file an "extends" names, resolved as the TypeScript compiler does: a relative or absolute
    path (".json" may be left off), or a package in a node_modules folder above (its tsconfig.json,
    or the file its package.json's "tsconfig" names); None when it is not there."""
    if spec.startswith(("./", "../", "/")) or spec in (".", ".."):
        bases = [directory / spec]
    else:
        bases = [d / "node_modules" / spec for d in (directory, *directory.parents)]
    for base in bases:
        manifest = base / "package.json"
        named = ""
        if manifest.is_file():
            try:
                named = json.loads(manifest.read_text("utf-8")).get("tsconfig") or ""
            except (OSError, ValueError, AttributeError):
                named = ""
        for candidate in (
            base,
            Path(f"{base}.json"),
            *([base / named] if isinstance(named, str) and named else []),
            base / "tsconfig.json",
        ):
            if candidate.is_file():
                return candidate
    return None


def _ts_glob(pattern: str, include: bool) -> re.Pattern[str]:
    """A tsconfig "include" or "exclude" pattern (repository-relative) as a regular expression over
    repository-relative paths: ``*`` and ``?`` within a name, ``**/`` across folders, and a last part
    with neither a wildcard nor an extension taken for a folder (everything under it)."""
    parts = [p for p in pattern.split("/") if p]
    last = parts[-1] if parts else ""
    if not parts or ("*" not in last and "?" not in last and "." not in last.lstrip(".")):
        parts += ["**", "*"]
    regex = ""
    for i, part in enumerate(parts):
        final = i == len(parts) - 1
        if part == "**":
            regex += ".*" if final else "(?:[^/]+/)*"
        else:
            regex += "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in part)
            regex += "" if final else "/"
    if include:
        return re.compile(regex + r"\Z")
    return re.compile(regex + r"(?:/.*)?\Z")  # an excluded folder takes what is under it


def _regular_inside(root: Path, rel: str) -> bool:
    try:
        path = root / rel
        return not path.is_symlink() and path.is_file() and path.resolve().is_relative_to(root)
    except (OSError, RuntimeError):
        return False


# -- scip-typescript without its hover texts ----------------------------------------------------------
# scip-typescript writes, beside each definition's occurrence, a SymbolInformation: the hover text (the
# signature printed by the checker, the doc comment) and the relationships to implemented interfaces.
# cg reads occurrences only, and printing every signature costs the checker work of its own: on tRPC's
# server (81 files) the runs without it took 2.87 s against 3.15 s (medians of 3, interleaved) and
# wrote 885 KB of index against 1.2 MB, with the same occurrences (one ambiguous name's two symbols in
# the other order). So when the program found is scip-typescript's Node script, cg runs it through
# this runner, which turns that one method into a no-op and then starts the indexer as its own
# ``main.js`` would. The runner is cg's own code, written into the run's temporary directory; the
# program it starts is the one the machine's settings or PATH named, never the repository's. A
# version whose files are laid out otherwise runs as it is: the runner then starts it unchanged.
_LEAN_RUNNER = """'use strict';
const fs = require('fs');
const path = require('path');
const main = fs.realpathSync(process.argv.splice(2, 1)[0]);
try {
  const { FileIndexer } = require(path.join(path.dirname(main), 'FileIndexer.js'));
  if (typeof FileIndexer.prototype.addSymbolInformation === 'function') {
    FileIndexer.prototype.addSymbolInformation = function () {};
  }
} catch (e) {}
const indexer = require(main);
if (typeof indexer.main === 'function') {
  indexer.main();
} else {
  const argv = [main, ...process.argv.slice(2)];
  const run = require('child_process').spawnSync(process.execPath, argv, { stdio: 'inherit' });
  process.exit(run.status === null ? 1 : run.status);
}
"""


def _lean(command: list[str], tmp: Path) -> list[str]:
    """``command`` run through ``_LEAN_RUNNER`` when it is a Node script of scip-typescript's layout
    (``node .../dist/src/main.js``, perhaps through npm's ``.bin`` link), else as it is."""
    if len(command) != 2:
        return command
    try:
        script = Path(command[1]).resolve()
        if not (script.name == "main.js" and (script.parent / "FileIndexer.js").is_file()):
            return command
    except (OSError, RuntimeError):
        return command
    runner = tmp / "cg-lean-scip-typescript.js"
    runner.write_text(_LEAN_RUNNER, "utf-8")
    return [command[0], str(runner), command[1]]


def run_typescript(
    repo: Path, paths: list[str], command: list[str], timeout: float, every: list[str]
) -> tuple[list[tuple[str, bytes]] | None, str]:
    """scip-typescript over the projects that cover ``paths``. When any of ``paths`` is loose (no
    tsconfig.json above it), every loose file of ``every`` (the repository's files in these languages)
    is indexed with it: loose scripts share one global scope, so a run over some of them would answer
    otherwise than a run over all."""
    root = repo.resolve()
    projects, loose = typescript_projects(root, paths)
    if loose:
        loose = sorted(set(loose) | set(typescript_projects(root, every)[1]))
    with tempfile.TemporaryDirectory(prefix="cg-scip-") as tmp:
        targets = [str(root / p) if p else str(root) for p in projects]
        if loose:
            synthetic = Path(tmp) / "loose"
            synthetic.mkdir()
            config = {"compilerOptions": LOOSE_OPTIONS, "files": [str(root / p) for p in loose]}
            (synthetic / "tsconfig.json").write_text(json.dumps(config), "utf-8")
            targets.append(str(synthetic))
        output = Path(tmp) / "index.scip"
        argv = [*_lean(command, Path(tmp)), "index", "--cwd", str(root), "--output", str(output), "--no-progress-bar"]
        argv += targets
        env = {k: v for k, v in os.environ.items() if k not in ("NODE_OPTIONS", "NODE_PATH")}
        env["HOME"] = tmp  # nothing the indexer caches lands in the user's home or the repository
        data, why = run_indexer(TYPESCRIPT.name, argv, Path(tmp), env, timeout, output)
        return (None, why) if data is None else ([("", data)], "")


def run_go(
    repo: Path, paths: list[str], command: list[str], timeout: float, every: list[str]
) -> tuple[list[tuple[str, bytes]] | None, str]:
    """scip-go over each Go module (the nearest go.mod above a file) that holds one of ``paths``, whole:
    a package's types reach across its files and its imports. Files under no go.mod are not answered."""
    del every  # a module is indexed whole anyway
    root = repo.resolve()
    modules, _outside = project_dirs(root, paths, _GO_MOD)
    if not modules:
        return None, f"no {_GO_MOD} above the Go files"
    deadline = time.monotonic() + timeout
    indexes: list[tuple[str, bytes]] = []
    with tempfile.TemporaryDirectory(prefix="cg-scip-") as tmp:
        for n, module in enumerate(modules):
            where = root / module if module else root
            output = Path(tmp) / f"index-{n}.scip"
            argv = [
                *command,
                "--output",
                str(output),
                "--project-root",
                ".",
                "--module-root",
                ".",
                "--repository-root",
                ".",
                "--module-version",
                "0",
                "--repository-remote",
                "cg-index",
                "--quiet",
            ]
            env = {**os.environ, **_GO_ENV}
            data, why = run_indexer(GO.name, argv, where, env, deadline - time.monotonic(), output, timeout)
            if data is None:
                return None, why
            indexes.append((module, data))
    return indexes, ""


def run_java(
    repo: Path, paths: list[str], command: list[str], timeout: float, every: list[str]
) -> tuple[list[tuple[str, bytes]] | None, str]:
    """cg-javaparser (tools/javaparser: JavaParser's symbol solver) over ``paths``; ``every`` (the
    repository's Java files) gives the source roots, the folders that hold packages, where the solver
    finds the types a file names. Each file is answered on its own, so an incremental run asks only
    for the files it re-resolves."""
    root = repo.resolve()
    with tempfile.TemporaryDirectory(prefix="cg-java-") as tmp:
        wanted, context, output = Path(tmp) / "wanted", Path(tmp) / "every", Path(tmp) / "answers.tsv"
        wanted.write_text("".join(f"{p}\n" for p in paths if "\n" not in p), "utf-8")
        context.write_text("".join(f"{p}\n" for p in sorted(set(every) | set(paths)) if "\n" not in p), "utf-8")
        argv = [*command, str(root), str(output), str(wanted), str(context)]
        env = {k: v for k, v in os.environ.items() if k not in ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH")}
        data, why = run_indexer(JAVAPARSER_NAME, argv, Path(tmp), env, timeout, output)
        return (None, why) if data is None else ([("", data)], "")


def read_java(
    data: bytes,
    wanted: set[str],
    read: Callable[[str], bytes | None],
    indexer: Indexer | None = None,
    base: str = "",
) -> Answers:
    """cg-javaparser's answers (one tab-separated line per call: file, line, UTF-16 column of the
    called name, then ``D`` with the definition's file, line and name, or ``E`` with a qualified
    name, then the line of the constructor a ``new`` runs; ``F`` lines name the files it read) keyed
    as read_index keys them; a line that does not read so is skipped."""
    del indexer, base
    out: Answers = {}
    lines_of: dict[str, list[bytes]] = {}
    for raw in data.decode("utf-8", "replace").splitlines():
        fields = raw.split("\t")
        if len(fields) != 8 or fields[3] not in ("D", "E", "F") or fields[0] not in wanted:
            continue
        if fields[3] == "F":  # the file was read: it is answered, if only with nothing
            out.setdefault(fields[0], {})
            continue
        path, kind, where, name = fields[0], fields[3], fields[4], fields[6]
        try:
            line, column, defined, constructor = int(fields[1]), int(fields[2]), int(fields[5]), int(fields[7])
        except ValueError:
            continue
        if path not in lines_of:
            source = read(path)
            lines_of[path] = source.split(b"\n") if source is not None else []
        lines = lines_of[path]
        if not 0 < line <= len(lines) or column < 0:
            continue
        if kind == "D":
            answer = Answer(name=name, path=where, line=defined, constructor=max(constructor, 0))
        else:
            answer = Answer(name=name, external=where)
        out.setdefault(path, {})[(line, _byte_column(lines[line - 1], column, UTF16))] = (answer,)
    return out


def run_indexer(
    name: str, argv: list[str], cwd: Path, env: dict[str, str], timeout: float, output: Path, budget: float = 0.0
) -> tuple[bytes | None, str]:
    """One indexer process, in its own session, killed whole past ``timeout``; its index's bytes, or
    None and why (``budget``: the limit to name, when ``timeout`` is what is left of it)."""
    limit = budget or timeout
    if timeout <= 0:
        return None, f"{name} ran over precise_timeout ({limit:g} s)"
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return None, f"could not start {name}: {exc.strerror or exc}"
    job = _JOB.get()
    try:
        if job is not None:
            job.started(proc)
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        return None, f"{name} ran over precise_timeout ({limit:g} s)"
    except BaseException:  # Ctrl-C: the indexer goes with the run
        _kill(proc)
        raise
    finally:
        if job is not None:
            job.ended(proc)
    if job is not None and job.cancelled.is_set():
        return None, f"{name} was stopped with the run"
    if proc.returncode != 0 or not output.is_file():
        tail = (err or b"").decode("utf-8", "replace").strip().splitlines()
        last = tail[-1][:200] if tail else "no output"
        return None, f"{name} failed (exit {proc.returncode}): {last}"
    if output.stat().st_size > _MAX_INDEX_BYTES:
        return None, f"{name} wrote an index over {_MAX_INDEX_BYTES // 1_000_000} MB"
    return output.read_bytes(), ""


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.wait()


# -- reading the index ---------------------------------------------------------------------------
def read_index(
    data: bytes,
    wanted: set[str],
    read: Callable[[str], bytes | None],
    indexer: Indexer | None = None,
    base: str = "",
) -> Answers:
    """Answers per file of ``wanted`` (repository-relative paths; ``read`` gives a file's bytes): each
    reference occurrence keyed by its 1-based line and its start as a byte column (tree-sitter's unit;
    an indexer may count UTF-16 units, as scip-typescript does), mapped to the definition occurrence of
    its symbol anywhere in the index, or to a dotted external name. Documents for other files are read
    for their definitions only. ``base``: the directory the index's document paths are relative to."""
    indexer = indexer or TYPESCRIPT
    index = parse_index(data)
    definitions: dict[str, tuple[str, int]] = {}  # symbol -> (path, 1-based line); locals per document
    documents = set()
    own = {""}  # packages the index defines symbols of (the repository's own; "" = unnamed, loose files)
    for doc in index.documents:
        path = posixpath.normpath(posixpath.join(base, doc.relative_path))
        documents.add(path)
        for occ in doc.occurrences:
            if occ.symbol_roles & DEFINITION and occ.symbol and len(occ.range) >= 3:
                if _key(path, occ.symbol) not in definitions and not occ.symbol.startswith("local "):
                    own.add(_package(occ.symbol))
                definitions.setdefault(_key(path, occ.symbol), (path, occ.range[0] + 1))
    out: Answers = {}
    for doc in index.documents:
        path = posixpath.normpath(posixpath.join(base, doc.relative_path))
        data_ = read(path) if path in wanted else None
        encoding = doc.position_encoding or indexer.encoding
        if data_ is None:
            continue
        lines = data_.split(b"\n")
        answers: dict[tuple[int, int], tuple[Answer, ...]] = {}
        for occ in doc.occurrences:
            if occ.symbol_roles & DEFINITION or not occ.symbol or len(occ.range) < 3:
                continue
            line0, start = occ.range[0], occ.range[1]
            if line0 >= len(lines):
                continue
            symbol = occ.symbol
            if symbol.endswith(_CONSTRUCTOR):  # `new Foo(...)`: the class, whose constructor the resolver adds
                symbol = symbol.removesuffix(_CONSTRUCTOR)
            answer = _answer(symbol, definitions.get(_key(path, symbol)), documents, own, indexer)
            if answer is not None:
                at = (line0 + 1, _byte_column(lines[line0], start, encoding))
                if answer not in answers.get(at, ()):
                    answers[at] = (*answers.get(at, ()), answer)
        out[path] = answers
    return out


# scip-typescript names a member of an anonymous object type by a count of the type literals it has met
# (``KyInstance#typeLiteral0:get.``), and the count differs between the programs of one run (a loose
# test file's reference says ``typeLiteral111`` for its project's ``typeLiteral0``): not part of the key.
_TYPE_LITERAL = re.compile(r"([#./:])typeLiteral\d+:")


def _key(path: str, symbol: str) -> str:
    if symbol.startswith("local "):
        return f"{path}\0{symbol}"
    return _TYPE_LITERAL.sub(r"\1typeLiteral:", symbol) if "typeLiteral" in symbol else symbol


def _byte_column(line: bytes, column: int, encoding: int) -> int:
    """A column counted in ``encoding``'s units, as a byte offset into ``line``."""
    if encoding == UTF8 or line.isascii():
        return column
    text = line.decode("utf-8", "replace")
    units = 0
    for i, char in enumerate(text):
        if units >= column:
            return len(text[:i].encode("utf-8"))
        units += 2 if encoding == UTF16 and ord(char) > 0xFFFF else 1
    return len(line)


def _package(symbol: str) -> str:
    parsed = parse_symbol(symbol) if "  " in symbol else None  # a doubled space escapes one in a name
    if parsed is not None:
        return parsed[0]
    fields = symbol.split(" ", 4)
    return "" if len(fields) < 4 or fields[2] == "." else fields[2]


def _answer(
    symbol: str, definition: tuple[str, int] | None, documents: set[str], own: set[str], indexer: Indexer
) -> Answer | None:
    if symbol.startswith("local "):
        return None if definition is None else Answer(name="", path=definition[0], line=definition[1])
    parsed = parse_symbol(symbol)
    if parsed is None or not parsed[1]:
        return None
    package, descriptors = parsed
    if descriptors[-1][1] in ("(", "["):  # a parameter or a type parameter: a value cg has no node for
        return None
    names = [name for name, suffix in descriptors if suffix != "/"]
    if not names:
        return None
    name = "constructor" if names[-1] == "<constructor>" else names[-1]
    if definition is not None:
        return Answer(name=name, path=definition[0], line=definition[1])
    if package in own or "/".join(n for n, suffix in descriptors if suffix == "/") in documents:
        # the repository's own symbol, defined in a file the compiler read but was not asked to index
        # (imported from outside the project): not an external, and not answered here
        return None
    return Answer(name=name, external=indexer.external(package, descriptors))


def typescript_external(package: str, descriptors: list[tuple[str, str]]) -> str:
    """``Array.map`` (the language's own library), ``axios.AxiosStatic.post`` (an npm package)."""
    dotted = ".".join("constructor" if n == "<constructor>" else n for n, suffix in descriptors if suffix != "/")
    return dotted if package == _TYPESCRIPT_LIB else f"{package}.{dotted}"


def _go_external(package: str, descriptors: list[tuple[str, str]]) -> str:
    """``net/http.Error``, ``encoding/json.Decoder.Decode``: the import path, then the names in it."""
    del package  # the module (github.com/golang/go/src for the standard library); the import path says more
    path = "/".join(n for n, suffix in descriptors if suffix == "/")
    dotted = ".".join(n for n, suffix in descriptors if suffix != "/")
    return f"{path}.{dotted}" if path else dotted


def parse_symbol(symbol: str) -> tuple[str, list[tuple[str, str]]] | None:
    """A global SCIP symbol's package name and descriptors, each (name, suffix): suffix ``/`` a
    namespace (a file in scip-typescript), ``#`` a type, ``.`` a term, ``m`` a method, ``(`` a
    parameter, ``[`` a type parameter, ``:`` meta, ``!`` a macro. None when it does not parse."""
    fields: list[str] = []
    i = 0
    while len(fields) < 4:  # scheme, manager, package name, version; a space inside one is doubled
        buf = []
        while i < len(symbol):
            if symbol[i] == " ":
                if symbol[i + 1 : i + 2] == " ":
                    buf.append(" ")
                    i += 2
                    continue
                break
            buf.append(symbol[i])
            i += 1
        if i >= len(symbol):
            return None
        fields.append("".join(buf))
        i += 1
    package = "" if fields[2] == "." else fields[2]
    descriptors: list[tuple[str, str]] = []
    text = symbol[i:]
    j = 0
    try:
        while j < len(text):
            if text[j] in "([":
                close = ")" if text[j] == "(" else "]"
                name, j = _name(text, j + 1)
                if text[j] != close:
                    return None
                descriptors.append((name, "(" if close == ")" else "["))
                j += 1
                continue
            name, j = _name(text, j)
            suffix = text[j]
            if suffix == "(":  # a method: name(disambiguator).
                end = text.index(").", j)
                descriptors.append((name, "m"))
                j = end + 2
            elif suffix in "/#.:!":
                descriptors.append((name, suffix))
                j += 1
            else:
                return None
    except (IndexError, ValueError):
        return None
    return package, descriptors


def _name(text: str, j: int) -> tuple[str, int]:
    if text[j] == "`":  # escaped: a doubled backtick stands for one
        buf = []
        j += 1
        while True:
            if text[j] == "`":
                if text[j + 1 : j + 2] == "`":
                    buf.append("`")
                    j += 2
                    continue
                return "".join(buf), j + 1
            buf.append(text[j])
            j += 1
    start = j
    while j < len(text) and text[j] in _IDENTIFIER_CHARS:
        j += 1
    return text[start:j], j


# -- the pass ------------------------------------------------------------------------------------
def run_precise(
    repo: Path,
    files: dict[str, str],
    configured: dict[str, str],
    timeout: float,
    every: dict[str, str] | None = None,
) -> PreciseResults:
    """The precise pass over ``files`` (repository-relative path -> cg's language name), the rest of
    the repository's files (``every``, same form) read beside them where a project needs them; each
    indexer whose languages are present runs when it can (``configured``: indexer name -> the program
    its setting names, "" for PATH). The report says, per language present, what answered it or why
    nothing did."""
    results = PreciseResults()
    root = repo.resolve()
    started = time.perf_counter()
    for indexer in INDEXERS:
        wanted = {p: lang for p, lang in files.items() if lang in indexer.languages}
        if not wanted:
            continue
        languages = sorted(set(wanted.values()))
        command, why = find_indexer(indexer, configured.get(indexer.name, ""))
        answers: Answers = {}
        if command is not None:
            context = [p for p, lang in (every or {}).items() if lang in indexer.languages]
            indexes, why = indexer.run(root, sorted(wanted), command, timeout, context)
            try:
                reader = indexer.read or read_index
                for base, data in indexes or ():
                    answers.update(reader(data, set(wanted), lambda rel: _read_source(root, rel), indexer, base))
            except DecodeError:
                answers, why = {}, f"{indexer.name} wrote an index that does not parse"
        results.answers.update(answers)
        for lang in languages:
            if why:
                results.report.languages[lang] = why
                continue
            mine = sum(1 for p in answers if wanted[p] == lang)
            total = sum(1 for v in wanted.values() if v == lang)
            results.report.languages[lang] = f"{indexer.name}: {mine} of {total} files"
    results.report.seconds = time.perf_counter() - started
    return results


class PreciseJob:
    """``run_precise`` in a thread of its own, started before the run needs its answers.

    Why: the indexers are other processes (Node, Go) that spend a second or more on even a small
    project (loading the compiler and the language's declarations), while the run has work of its own
    that does not need their answers: parsing, and preparing the store (a fresh Kùzu generation's
    tables and full-text indexes, about half a second). On two cores the two overlap, and the precise
    pass stops doubling a small project's index time (benchmarks/languages.py --precise). The thread
    only waits on the indexer and then decodes its index; ``result`` waits in short slices, so Ctrl-C
    reaches the run at once, and ``cancel`` kills the indexer's process group, which Ctrl-C at the
    terminal does not reach (it runs in a session of its own)."""

    def __init__(
        self, repo: Path, files: dict[str, str], configured: dict[str, str], timeout: float, every: dict[str, str]
    ) -> None:
        self.files = files  # the paths it answers, as run_precise takes them
        self.cancelled = threading.Event()
        self._procs: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()
        self._results: PreciseResults | None = None
        self._error: BaseException | None = None
        args = (repo, files, configured, timeout, every)
        self._thread = threading.Thread(target=self._run, args=args, name="cg-precise", daemon=True)
        self._thread.start()

    def _run(
        self, repo: Path, files: dict[str, str], configured: dict[str, str], timeout: float, every: dict[str, str]
    ) -> None:
        _JOB.set(self)  # this thread's context: run_indexer registers its processes with the job
        try:
            self._results = run_precise(repo, files, configured, timeout, every)
        except BaseException as exc:  # noqa: BLE001 - handed to the thread that waits for the answers
            self._error = exc

    def started(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._procs.add(proc)
            if not self.cancelled.is_set():
                return
        _kill(proc)  # cancelled before it started: it goes at once

    def ended(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._procs.discard(proc)

    def result(self) -> PreciseResults:
        """The answers, once the indexers are done; what the thread raised is raised here."""
        try:
            while self._thread.is_alive():
                self._thread.join(0.1)
                stop_if_interrupted()  # a Ctrl-C whose KeyboardInterrupt a destructor swallowed
        except BaseException:
            self.cancel()
            raise
        if self._error is not None:
            raise self._error
        assert self._results is not None
        return self._results

    def cancel(self) -> None:
        """Stop the indexers now (the run ended without their answers); their thread then ends too."""
        self.cancelled.set()
        with self._lock:
            procs = list(self._procs)
        for proc in procs:
            _kill(proc)


_JOB: ContextVar[PreciseJob | None] = ContextVar("cg_precise_job", default=None)


def _read_source(root: Path, rel: str) -> bytes | None:
    """A walked file's bytes again (for columns past non-ASCII text); None if it is gone or unreadable."""
    try:
        return (root / rel).read_bytes()
    except OSError:
        return None


TYPESCRIPT = Indexer(
    name="scip-typescript",
    languages=("typescript", "javascript"),
    setting="scip_typescript",
    install="npm install -g @sourcegraph/scip-typescript",
    encoding=UTF16,
    run=run_typescript,
    external=typescript_external,
)
GO = Indexer(
    name="scip-go",
    languages=("go",),
    setting="scip_go",
    install="go install github.com/sourcegraph/scip-go/cmd/scip-go",
    encoding=UTF8,
    run=run_go,
    external=_go_external,
)
JAVAPARSER_NAME = "cg-javaparser"
JAVAPARSER = Indexer(
    name=JAVAPARSER_NAME,
    languages=("java",),
    setting="javaparser",
    install="build it with tools/javaparser/build: JavaParser's symbol solver, a JDK and Maven once",
    encoding=UTF16,
    run=run_java,
    external=lambda package, descriptors: "",  # it names externals itself
    read=read_java,
)
INDEXERS = (TYPESCRIPT, GO, JAVAPARSER)
LANGUAGES = {language: indexer for indexer in INDEXERS for language in indexer.languages}
