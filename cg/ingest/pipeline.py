"""One index run as named phases: ``plan`` (what changed since the saved state), ``parse``,
``resolve``, ``embed`` (chunks, documents, commits) and ``write``; ``index_repository`` calls them in turn.

Parse trees never outlive their file: extraction keeps plain records only. The summary counts every
stage (files, definitions, edges, share of call sites resolved in the repo, files skipped and why),
so an incomplete graph never looks like a finished one.
"""

from __future__ import annotations

import logging
import resource
import time
from collections import Counter
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass, field, replace
from functools import cache, cached_property
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from cg.config import Settings
from cg.embed import Embedder, approx_tokens, content_hash
from cg.errors import Interrupted, stop_if_interrupted
from cg.graph.store import FileWrite, GraphWriter
from cg.ingest import freshness, git
from cg.ingest.baseline import PROBES, write_null_cosine
from cg.ingest.chunk import Chunked, TokenCounter, chunk_file
from cg.ingest.docs import MentionIndex, mentionable, split_document
from cg.ingest.history import History, read_history, write_history
from cg.ingest.languages import Extractors
from cg.ingest.languages.registry import file_module, languages_of_kind, resolved_by_python
from cg.ingest.resolve.generic import GenericResolver
from cg.ingest.resolve.jedi_resolver import JediResults, run_jedi
from cg.ingest.resolve.python import Resolver, body_inputs, defines_edges, jedi_names
from cg.ingest.resolve.scip import INDEXERS as PRECISE_INDEXERS
from cg.ingest.resolve.scip import LANGUAGES as PRECISE_LANGUAGES
from cg.ingest.resolve.scip import PreciseJob, PreciseResults
from cg.ingest.secrets import redactor
from cg.ingest.state import (
    Edges,
    FileState,
    IndexState,
    fingerprint,
    index_settings,
    load_state,
    new_token,
    save_state,
    state_path,
    thaw,
)
from cg.ingest.walk import SourceFile, WalkReport, file_kind, walk
from cg.model import CommitRecord, DocSection, Edge, External, FileExtraction, FileRecord, ResolvedBy

log = logging.getLogger(__name__)


class Progress(Protocol):
    def stage(self, name: str, total: int) -> AbstractContextManager[Callable[[int], None]]: ...
    def note(self, text: str) -> None:
        """A line for whoever watches the run (the graph became queryable, say)."""


class _Silent:
    def note(self, text: str) -> None:
        pass

    def stage(self, name: str, total: int) -> AbstractContextManager[Callable[[int], None]]:
        return nullcontext(lambda n: None)


@dataclass(frozen=True)
class Failure:
    """A file one stage could not handle (any exception: RecursionError on code nested thousands
    deep, or a bug of ours), and what the index holds for it instead. The run goes on."""

    path: str
    stage: str  # parse | resolve
    error: str  # the exception's type, so a bug of ours is told apart from hostile input
    reason: str  # one line a user can act on
    fallback: str  # what the index holds instead: see PARSE_FALLBACK and the RESOLVE_ ones

    def __str__(self) -> str:
        return f"{self.path}: {self.stage}: {self.reason} -> {self.fallback}"


PARSE_FALLBACK = "indexed without definitions"
RESOLVE_BY_NAME = "resolved by name instead"  # jedi's resolver failed; the name resolver did not
RESOLVE_NOTHING = "definitions kept, no call, import or inheritance edges"


@dataclass
class IndexSummary:
    repo: str
    backend: str
    mode: str = "full"  # full | incremental
    added: int = 0  # files new to the index in this run
    changed: int = 0  # files whose content changed
    affected: int = 0  # unchanged files whose edges were resolved again
    pruned_externals: int = 0
    doc_sections: int = 0
    commits: int = 0
    commits_new: int = 0
    files: int = 0
    symbols: int = 0
    chunks: int = 0  # fragments, skeletons and tables of contents beside the definitions
    edges: dict[str, int] = field(default_factory=dict)
    call_sites: int = 0
    calls_in_repo: int = 0
    calls_external: int = 0
    calls_unresolved: int = 0
    calls_ambiguous: int = 0  # of the unresolved: names with several candidates in the repo, not guessed
    languages: dict[str, int] = field(default_factory=dict)  # files per language
    removed_files: int = 0
    syntax_errors: list[str] = field(default_factory=list)
    binary: list[str] = field(default_factory=list)
    not_utf8: list[str] = field(default_factory=list)
    too_large: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    failed: list[Failure] = field(default_factory=list)  # files a stage could not handle, and their fallback
    capped: list[str] = field(default_factory=list)  # "path: N call sites, kept M" / "... chunks ..."
    secret_files: list[str] = field(default_factory=list)  # private keys, credentials: skipped unread
    redacted_files: dict[str, int] = field(default_factory=dict)  # path -> secrets masked (this run)
    redacted_commits: dict[str, int] = field(default_factory=dict)  # short sha -> secrets masked (this run)
    other_files: int = 0
    ignored: int = 0
    resolver: str = "name"
    jedi_sites: int = 0
    jedi_answered: int = 0
    jedi_shared: int = 0  # calls not asked: they took the answer of another call of the same certain name
    jedi_workers: int = 0
    jedi_timed_out: list[str] = field(default_factory=list)
    jedi_failed: list[str] = field(default_factory=list)
    # the precise pass (cg/ingest/resolve/scip.py): language -> what answered it ("scip-typescript: 40 of
    # 42 files") or why nothing did (not installed, timed out, failed)
    precise: dict[str, str] = field(default_factory=dict)
    # seconds the run waited for those indexers after its own work (``seconds["precise"]``: theirs)
    precise_waited: float = 0.0
    embedded: int = 0
    embed_cached: int = 0
    embed_device: str | None = None  # where the model ran ("cpu", "cuda"); None when it was not loaded
    # files and commits stored without their vectors (``embed = "later"``): a later run computes them
    unembedded_files: int = 0
    unembedded_commits: int = 0
    queryable_after: float = 0.0  # seconds from the start until the graph was stored whole (before vectors)
    seconds: dict[str, float] = field(default_factory=dict)
    # of those stages, what the store's own steps took in each of its runs ("write", and "vectors" when
    # the vectors were set after the graph): GraphWriter.run_steps, e.g. Kùzu's generation copy and switch
    store_steps: dict[str, dict[str, float]] = field(default_factory=dict)
    peak_rss_mb: float = 0.0

    @property
    def resolved_share(self) -> float:
        """Share of call edges that land on a definition in the repo or a named library target."""
        total = self.calls_in_repo + self.calls_external + self.calls_unresolved
        return (self.calls_in_repo + self.calls_external) / total if total else 1.0

    @property
    def secrets_redacted(self) -> int:
        """Secrets masked in the files and commit messages this run stored."""
        return sum(self.redacted_files.values()) + sum(self.redacted_commits.values())

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["resolved_share"] = round(self.resolved_share, 4)
        data["secrets_redacted"] = self.secrets_redacted
        return data


def _record(source, data: bytes, committed_at: int = 0) -> FileRecord:
    return FileRecord(
        path=source.path,
        language=source.language,
        kind=file_kind(source.path, source.language),
        blob_sha=source.blob_sha,
        loc=data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1),
        module=file_module(source.language, source.path),
        committed_at=committed_at,
    )


_EXTRACTORS = Extractors()


def extractor_for(language: str):
    """The extractor of a code or config language, or None (documents are split, not parsed)."""
    if not language or language in languages_of_kind("docs"):
        return None
    try:
        return _EXTRACTORS.get(language)
    except ValueError:
        return None


def extract_repository(
    settings: Settings, progress: Progress | None = None, summary: IndexSummary | None = None
) -> tuple[list[FileExtraction], WalkReport]:
    """Walk and parse: plain records for every code file (no parse tree survives its file)."""
    report = WalkReport()
    sources = [s for s in walk(settings.repo, report, settings.max_file_bytes) if extractor_for(s.language)]
    return _extract(sources, {}, progress or _Silent(), summary, settings.max_calls_per_file), report


def _extract(
    sources: list, committed: dict[str, int], progress: Progress, summary: IndexSummary | None, max_calls: int = 0
) -> list[FileExtraction]:
    extractions: list[FileExtraction] = []
    with progress.stage("parse", len(sources)) as advance:
        for source in sources:
            record = _record(source, source.data, committed.get(source.path, 0))
            ex, failure = safe_extract(record, source.data)
            if failure is not None and summary is not None:
                summary.failed.append(failure)
            if ex.warnings and summary is not None:
                summary.syntax_errors.extend(f"{source.path}: {w}" for w in ex.warnings)
            if max_calls and len(ex.calls) > max_calls:
                if summary is not None:
                    summary.capped.append(f"{source.path}: {len(ex.calls)} call sites, kept the first {max_calls}")
                ex = replace(ex, calls=ex.calls[:max_calls])
            extractions.append(ex)
            advance(1)
    return extractions


def failure_reason(exc: BaseException) -> str:
    """One line for a file that broke a stage: what broke, in words a user can act on."""
    if isinstance(exc, RecursionError):
        return "nested too deeply to analyse (RecursionError)"
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'no detail'}"


def _failure(path: str, stage: str, exc: Exception, fallback: str) -> Failure:
    """The record of a failure, logged with the file and the exception's type (its traceback at
    debug level: ``CG_DEBUG=1 cg index`` shows it), so a bug of ours never passes unseen."""
    log.warning("%s: %s failed with %s; %s", path, stage, type(exc).__name__, fallback)
    log.debug("%s: %s failed", path, stage, exc_info=exc)
    return Failure(path, stage, type(exc).__name__, failure_reason(exc), fallback)


def safe_extract(record: FileRecord, data: bytes) -> tuple[FileExtraction, Failure | None]:
    """The file's records and None or, when the extractor fails on it, the records of an empty file of
    the same path (it stays in the index, with no definitions) and the failure: one bad file never
    stops a run."""
    extractor = extractor_for(record.language)
    try:
        return extractor.extract(record, data), None
    except Exception as exc:  # noqa: BLE001 - one bad file never stops a run; the summary names it
        return replace(extractor.extract(record, b""), file=record), _failure(record.path, "parse", exc, PARSE_FALLBACK)


def resolve_extractions(
    settings: Settings,
    extractions: list[FileExtraction],
    progress: Progress | None = None,
    summary: IndexSummary | None = None,
) -> tuple[list[Edge], dict[str, list[External]]]:
    """Python: jedi (when configured) then the name resolver; the other languages: the generic
    resolver (cg/ingest/resolve/generic.py). Every file's edges and the externals they name."""
    per_file = resolve_files(settings, extractions, None, progress, summary)
    return [e for r in per_file.values() for e in r.edges], {p: r.externals for p, r in per_file.items()}


@dataclass
class Resolution:
    """One file's resolved edges and the externals they name."""

    edges: list[Edge]
    externals: list[External]


def resolve_files(
    settings: Settings,
    extractions: list[FileExtraction],
    targets: set[str] | None,
    progress: Progress | None = None,
    summary: IndexSummary | None = None,
    precise_job: PreciseJob | None = None,
) -> dict[str, Resolution]:
    """Edges and externals of the files in ``targets`` (every file when None), resolved against the
    whole repository's ``extractions``: Python with jedi (when configured) then the name resolver,
    the other languages with the generic resolver (cg/ingest/resolve/generic.py). jedi is asked about
    every position of a target file, never a subset: it caps how often it infers one function per
    script, so which other sites of a file are asked changes the answer at a site, and a subset
    would not give what a full run gives. ``precise_job``: the precise pass over these targets, started
    earlier (``start_precise``)."""
    progress = progress or _Silent()
    jedi: JediResults | None = None
    chosen = [ex for ex in extractions if targets is None or ex.file.path in targets]
    python = [ex for ex in chosen if resolved_by_python(ex.file.language)]
    if settings.resolver == "jedi" and python:
        with progress.stage("jedi", len(python)) as advance:
            jedi = run_jedi(
                settings.repo, python, jedi_names(extractions), settings.jedi_workers, settings.jedi_budget, advance
            )
        if summary is not None:
            report = jedi.report
            summary.jedi_sites, summary.jedi_answered, summary.jedi_workers = (
                report.sites,
                report.answered,
                report.workers,
            )
            summary.jedi_timed_out, summary.jedi_failed = report.timed_out, report.failed
            summary.jedi_shared = report.shared
            summary.seconds["jedi"] = report.seconds
    if summary is not None:
        summary.resolver = settings.resolver
    precise = _precise_pass(settings, chosen, extractions, progress, summary, precise_job)
    python_files = [ex for ex in extractions if resolved_by_python(ex.file.language)]
    resolver = Resolver(python_files, jedi)
    others = [ex for ex in extractions if not resolved_by_python(ex.file.language)]
    generic = GenericResolver(others, settings.repo, precise) if others else None
    by_name = cache(lambda: Resolver(python_files, None))  # jedi's fallback, made when a file first needs it
    out: dict[str, Resolution] = {}
    for ex in chosen:
        primary = generic if generic is not None and not resolved_by_python(ex.file.language) else resolver
        fallback = by_name if primary is resolver and jedi is not None else None
        out[ex.file.path], failure = _resolve_file(ex, primary, fallback)
        if failure is not None and summary is not None:
            summary.failed.append(failure)
    return out


def _precise_args(
    settings: Settings, chosen: list[FileExtraction], extractions: list[FileExtraction]
) -> tuple[Path, dict[str, str], dict[str, str], float, dict[str, str]] | None:
    """``run_precise``'s arguments for the files being resolved, or None when the pass is off or no
    file is in a language that has an indexer."""
    files = {ex.file.path: ex.file.language for ex in chosen if ex.file.language in PRECISE_LANGUAGES}
    if settings.precise == "off" or not files:
        return None
    every = {ex.file.path: ex.file.language for ex in extractions}
    programs = {indexer.name: getattr(settings, indexer.setting) for indexer in PRECISE_INDEXERS}
    return settings.repo, files, programs, settings.precise_timeout, every


def start_precise(
    settings: Settings, chosen: list[FileExtraction], extractions: list[FileExtraction]
) -> PreciseJob | None:
    """The precise pass over ``chosen`` started in the background (``PreciseJob``), or None when it
    would not run; ``resolve_files`` takes its answers when it gets to them."""
    args = _precise_args(settings, chosen, extractions)
    return PreciseJob(*args) if args is not None else None


def _precise_pass(
    settings: Settings,
    chosen: list[FileExtraction],
    extractions: list[FileExtraction],
    progress: Progress,
    summary: IndexSummary | None,
    job: PreciseJob | None = None,
) -> PreciseResults | None:
    """The compilers' answers for the files being resolved (``precise = "auto"``), or None when off or
    when no file is in a language that has an indexer; ``job``: the same pass, started earlier over the
    same files. An incremental run re-indexes the projects that hold the changed files, whole (a
    project's types reach across its files)."""
    if job is None:
        args = _precise_args(settings, chosen, extractions)
        if args is None:
            return None
        job = PreciseJob(*args)  # waited for at once: the run had nothing else to do meanwhile
    waiting = time.perf_counter()
    with progress.stage("precise", len(job.files)) as advance:
        precise = job.result()
        advance(len(job.files))
    if summary is not None:
        summary.precise_waited += time.perf_counter() - waiting
    if summary is not None:
        summary.precise = dict(precise.report.languages)
        summary.seconds["precise"] = precise.report.seconds
    return precise


def _resolve_file(
    ex: FileExtraction, primary: Resolver | GenericResolver, by_name: Callable[[], Resolver] | None
) -> tuple[Resolution, Failure | None]:
    """One file's edges, and the failure when the resolver broke on it: then the name resolver (when
    the first one used jedi), then the file's DEFINES edges alone, so its definitions stay attached
    to it. Any exception, as in ``safe_extract``: one file never stops the run."""
    try:
        return Resolution(*primary.edges(ex)), None
    except Exception as exc:  # noqa: BLE001 - reported below with the fallback taken
        first = exc
    if by_name is not None:
        try:
            return Resolution(*by_name().edges(ex)), _failure(ex.file.path, "resolve", first, RESOLVE_BY_NAME)
        except Exception:  # noqa: BLE001 - the last fallback follows; the first failure is the one reported
            pass
    return Resolution(defines_edges(ex), []), _failure(ex.file.path, "resolve", first, RESOLVE_NOTHING)


def index_repository(
    settings: Settings,
    store: GraphWriter,
    embedder: Embedder,
    progress: Progress | None = None,
    full: bool = False,
    since: str | None = None,
    embed_mode: str | None = None,
) -> IndexSummary:
    """Bring the index up to date with the working tree: only what changed, unless ``full`` or the
    saved state cannot be trusted (see cg/ingest/state.py and docs/freshness.md).

    ``embed_mode`` (default: the ``embed`` setting) says when the vectors the cache does not hold are
    computed: ``now`` in this run, ``later`` by a later run (``cg index``, ``cg watch``). Either way a
    run that must compute many (``DEFER_AT``) writes the graph and its full-text index first, as a
    complete run readers can query, and sets the vectors after it (``fill_vectors``)."""
    try:
        return _index_repository(settings, store, embedder, progress, full, since, embed_mode)
    finally:
        thaw()  # the saved state's records, frozen when it was loaded (cg/ingest/state.py)


def _index_repository(
    settings: Settings,
    store: GraphWriter,
    embedder: Embedder,
    progress: Progress | None,
    full: bool,
    since: str | None,
    embed_mode: str | None,
) -> IndexSummary:
    progress = progress or _Silent()
    embed_mode = embed_mode or settings.embed
    summary = IndexSummary(repo=str(settings.repo), backend=store.backend)
    clock = _Stopwatch()

    planned = plan(settings, store, embedder.cache_key, full, since)
    summary.mode, summary.added = planned.mode, planned.added
    summary.changed, summary.removed_files = len(planned.changed) - planned.added, len(planned.removed)
    summary.redacted_files = planned.redacted
    if planned.trusted:  # the store's copy of the index to write overlaps parsing and resolving
        store.prepare(full=False, dimension=_width(store, embedder))

    parsed = parse(planned, progress, summary)
    summary.seconds["parse"] = clock.lap()  # with the plan: walking and hashing the tree

    # The precise pass's indexers (other processes) start now and work while this process embeds and
    # makes the store's run ready; the resolution then takes their answers (``_start_precise``).
    targeted = resolve_targets(planned, parsed)
    job = _start_precise(planned, parsed, targeted, store, embedder)
    try:
        embedded = embed(planned, parsed, embedder, store, progress, defer_any=embed_mode == "later")
        if not embedded.deferred:
            embedded = replace(embedded, probes=embedder.embed(list(PROBES)))  # from the cache after the first run
        summary.capped.extend(
            f"{ex.file.path}: {len(unit.chunks) - 1 + unit.dropped} chunks, kept the first {len(unit.chunks) - 1}"
            for ex, unit in embedded.chunked
            if unit.dropped
        )
        summary.embedded, summary.embed_cached = embedded.embedded, embedded.cached
        summary.seconds["model"] = embedded.model_seconds
        summary.seconds["embed"] = clock.lap() - embedded.model_seconds

        resolved = resolve(planned, parsed, progress, summary, targeted, job)
        summary.affected = len(resolved.affected)
        summary.seconds["resolve"] = clock.lap() - summary.seconds.get("jedi", 0.0) - summary.precise_waited
    finally:
        if job is not None:
            job.cancel()  # a no-op once its answers were taken; else the indexers stop with the run

    written = write(planned, parsed, resolved, embedded, store, progress, {f.path: f.stage for f in summary.failed})
    summary.pruned_externals = written.pruned_externals
    summary.seconds["write"] = clock.lap()
    summary.store_steps["write"] = _rounded(store.run_steps())
    summary.queryable_after = round(time.perf_counter() - clock.started, 3)

    if planned.state.unembedded or planned.state.unembedded_commits:
        if embed_mode == "later":
            summary.unembedded_files = len(planned.state.unembedded)
            summary.unembedded_commits = len(planned.state.unembedded_commits)
        else:
            progress.note(
                "the graph and its full-text index are stored and can be queried;"
                " computing the vectors the cache does not hold"
            )
            try:
                filled = fill_vectors(settings, store, embedder, planned.state, planned.state_path, embedded, progress)
            except KeyboardInterrupt as exc:
                raise Interrupted(
                    "interrupted while computing vectors: the graph is stored and answers from the full-text and"
                    " graph arms meanwhile; the next `cg index` computes the vectors"
                ) from exc
            summary.embedded += filled.embedded
            summary.embed_cached += filled.cached
            summary.seconds["model"] += filled.model_seconds
            summary.seconds["vectors"] = clock.lap() - filled.model_seconds - filled.write_seconds
            summary.seconds["vectors_write"] = filled.write_seconds
            summary.store_steps["vectors"] = _rounded(store.run_steps())

    summary.embed_device = embedder.device_used
    _totals(summary, written.files, planned.report)
    summary.commits, summary.commits_new = len(embedded.history.commits), len(embedded.history.new)
    summary.redacted_commits = embedded.history.redacted
    summary.peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return summary


def _start_precise(
    planned: Plan, parsed: Parsed, targeted: tuple[set[str], set[str]], store: GraphWriter, embedder: Embedder
) -> PreciseJob | None:
    """The precise pass over the files this run resolves, started in the background, and the store's
    run made ready meanwhile (``GraphWriter.prepare``); None when the pass would not run.

    Why this order: the indexers are other processes that spend a second or more on even a small
    project (loading the compiler and the language's declarations) and need nothing from this
    process but the file list, while the run has work that needs nothing from them: embedding (or
    preparing the texts for later) and a fresh Kùzu generation's tables and full-text indexes (about
    half a second). Done one after the other they doubled a small JavaScript project's index time
    (benchmarks/languages.py --precise); on two cores they overlap. The graph written is the same: the
    resolution still takes every answer before any edge is made."""
    extractions = list(parsed.extractions.values())
    chosen = [ex for ex in extractions if ex.file.path in targeted[1]]
    job = start_precise(planned.settings, chosen, extractions) if chosen else None
    if job is not None:
        try:
            store.prepare(full=not planned.trusted, dimension=_width(store, embedder))
        except BaseException:
            job.cancel()
            raise
    return job


def _rounded(seconds: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 3) for k, v in seconds.items()}


class _Stopwatch:
    """Seconds between laps, the first counted from its creation."""

    def __init__(self) -> None:
        self.started = self._last = time.perf_counter()

    def lap(self) -> float:
        """Seconds since the last lap; each stage ends with one, so a Ctrl-C that a destructor swallowed
        stops the run here (cg/errors.py ``CTRL_C``)."""
        stop_if_interrupted()
        now = time.perf_counter()
        seconds, self._last = now - self._last, now
        return seconds


@dataclass(frozen=True)
class Plan:
    """What a run will do, decided before anything is parsed: whether it builds on the saved state,
    what is on disk, and which files changed, appeared, vanished or only got a new commit time."""

    settings: Settings
    trusted: bool  # the saved state matches the store and the settings: redo only what changed
    state: IndexState  # the saved state when trusted, else an empty one with this run's fingerprint
    fingerprint: str
    embedding: str  # the embedder's cache key: vectors of another key must not mix with this run's
    shaping: dict[str, str]  # the settings that shape the index, by name (the fingerprint's parts)
    state_path: Path
    git_head: str  # "" outside git
    report: WalkReport
    sources: list[SourceFile]  # read from disk (with --since: only the files of the diff)
    present: set[str]  # every path the index holds after the run
    changed: list[SourceFile]  # new or other content: every source of a full run
    removed: list[str]  # in the index, gone from the tree
    retimed: list[str]  # the same content, another newest commit
    committed: dict[str, int]  # path -> time of the newest commit touching it
    redacted: dict[str, int]  # path -> secrets masked in the changed files' text

    @property
    def mode(self) -> str:
        return "incremental" if self.trusted else "full"

    @property
    def saved(self) -> IndexState | None:
        """The saved state when this run builds on it."""
        return self.state if self.trusted else None

    @cached_property
    def changed_paths(self) -> set[str]:
        return {s.path for s in self.changed}

    @cached_property
    def added(self) -> int:
        """How many of the changed files are new to the index."""
        return sum(1 for s in self.changed if s.path not in self.state.files)

    @cached_property
    def documents(self) -> list[SourceFile]:
        """The changed documents: split into sections, not parsed."""
        return [s for s in self.changed if s.language in languages_of_kind("docs")]


def plan(settings: Settings, store: GraphWriter, embedding: str, full: bool = False, since: str | None = None) -> Plan:
    """Trust the saved state or start over, then compare the tree with it. ``embedding`` is the
    embedder's cache key; with ``since`` only the files of ``git diff since`` are read, the others are
    taken as they were."""
    repo = settings.repo
    git_head = git.head(repo)
    spath = state_path(settings.checked_index_dir(create=True), store.backend)
    shaping = index_settings(settings, embedding)
    fp = fingerprint(*shaping.values())
    saved = None if full else load_state(spath)
    if since is not None and not git_head:
        raise git.GitError("--since needs a git repository")
    if since is not None:
        git.checked_revision(since)  # before anything runs: an option-like revision is refused in one line
    trusted = saved is not None and freshness.trusted(saved, fp, store, embedding)
    state = saved if saved is not None and trusted else IndexState(fingerprint=fp, settings=shaping)
    report = WalkReport()
    only = git.changed_since(repo, since) if since is not None and trusted else None
    # a file the last run read, whose stat is still the one it saw, is not read again (walk.stat_key);
    # one a stage fell back on is, to be tried again
    known = {p: fs.stat for p, fs in state.files.items() if fs.stat is not None and not fs.failed} if trusted else {}
    sources = list(walk(repo, report, settings.max_file_bytes, only=only, known=known))
    on_disk = {s.path for s in sources} | set(report.kept)
    present = on_disk if only is None else (set(state.files) - only) | on_disk  # --since: the rest as it was
    committed = git.last_commit_times(repo, present) if git_head else {}
    stored = set(state.files) if trusted else set(store.file_shas())
    # a file a stage fell back on is tried again (and reported again) until it goes through
    new_content = [
        s
        for s in sources
        if s.path not in state.files or state.files[s.path].sha != s.blob_sha or state.files[s.path].failed
    ]
    changed, redacted = _redact(new_content)
    masked = {s.path: s for s in changed}
    sources = [masked.get(s.path, s) for s in sources]
    unchanged = present - {s.path for s in changed}
    retimed = sorted(p for p in unchanged if p in state.files and state.files[p].committed_at != committed.get(p, 0))
    return Plan(
        settings,
        trusted,
        state,
        fp,
        embedding,
        shaping,
        spath,
        git_head,
        report,
        sources,
        present,
        changed,
        sorted(stored - present),
        retimed,
        committed,
        redacted,
    )


def _redact(sources: list[SourceFile]) -> tuple[list[SourceFile], dict[str, int]]:
    """The one place a file's text is scrubbed: every changed file (the only text a run stores,
    embeds or full-text indexes) with its secrets masked in place (cg/ingest/secrets.py), and how
    many were masked per path. Its blob sha stays the sha of the file on disk."""
    scrub = redactor()
    out: list[SourceFile] = []
    found: dict[str, int] = {}
    for source in sources:
        redacted = scrub.redact(source.data.decode("utf-8"), source.language)
        if redacted.count:
            found[source.path] = redacted.count
            source = replace(source, data=redacted.text.encode("utf-8"))
        out.append(source)
    return out, found


@dataclass(frozen=True)
class Parsed:
    fresh: dict[str, FileExtraction]  # the changed code files, parsed in this run
    extractions: dict[str, FileExtraction]  # every code file present: fresh, else from the saved state


def parse(planned: Plan, progress: Progress, summary: IndexSummary) -> Parsed:
    """Parse the changed code files; every other code file's records come from the saved state (with
    its new commit time when only that changed)."""
    code = [s for s in planned.changed if extractor_for(s.language)]
    fresh = {
        ex.file.path: ex
        for ex in _extract(code, planned.committed, progress, summary, planned.settings.max_calls_per_file)
    }
    saved, retimed = planned.state.files, set(planned.retimed)
    extractions: dict[str, FileExtraction] = {}
    for path in sorted(planned.present):
        before = saved[path].extraction if path in saved and path not in planned.changed_paths else None
        if path in fresh:
            extractions[path] = fresh[path]
        elif before is not None and path in retimed:
            extractions[path] = replace(before, file=replace(before.file, committed_at=planned.committed.get(path, 0)))
        elif before is not None:
            extractions[path] = before
    return Parsed(fresh, extractions)


@dataclass(frozen=True)
class Resolved:
    affected: set[str]  # unchanged files whose edges may now point elsewhere
    files: dict[str, Resolution]  # the edges of the fresh and the affected files


def resolve_targets(planned: Plan, parsed: Parsed) -> tuple[set[str], set[str]]:
    """The unchanged files a change may redirect (``affected``), and every file to resolve: those and
    the changed ones."""
    touched = planned.changed_paths | set(planned.removed)
    body = _name_resolver_bodies if planned.settings.resolver == "name" else None
    affected = (
        freshness.affected(planned.state, parsed.extractions, parsed.fresh, touched, body) if planned.trusted else set()
    )
    return affected, set(parsed.fresh) | affected


def _name_resolver_bodies(ex: FileExtraction) -> Mapping[str, object]:
    """What of a definition's body can move another file's edges when jedi is off: for Python, the
    facts the name resolver reads (``body_inputs``); for other languages the whole text, since a
    compiler's precise pass may infer through a body (a TypeScript function's return type)."""
    return body_inputs(ex) if resolved_by_python(ex.file.language) else freshness.texts(ex)


def resolve(
    planned: Plan,
    parsed: Parsed,
    progress: Progress,
    summary: IndexSummary,
    targeted: tuple[set[str], set[str]] | None = None,
    precise_job: PreciseJob | None = None,
) -> Resolved:
    """Resolve the changed files and the unchanged ones a change may redirect, against the whole repo
    (``targeted``: ``resolve_targets``'s answer, when the run asked it already)."""
    affected, targets = targeted or resolve_targets(planned, parsed)
    extractions = list(parsed.extractions.values())
    return Resolved(
        affected,
        resolve_files(planned.settings, extractions, targets, progress, summary, precise_job) if targets else {},
    )


# A run whose cache misses are at least this many texts (about ten seconds of the model on two
# cores) stores the graph first and sets the vectors after, in a second run of the store: search,
# callers, impact and explain (with the full-text and graph arms) work while the model runs, and an
# interrupted embedding leaves a complete graph that knows which vectors it lacks. Fewer misses are
# embedded before the write, as one run, because a second run costs a generation on Kùzu.
DEFER_AT = 1000
Target = tuple[str, str, str]  # (label, vector property, node id) of one embedded text


class Vectors:
    """The embedded matrix, handed out in consecutive blocks in the order its texts were laid down
    (``_embeddable``); ``done`` checks that every row was taken, so no vector lands on the wrong node.
    Without a matrix (the vectors follow the write) every block is None."""

    def __init__(self, matrix: np.ndarray | None, width: int, rows: int | None = None) -> None:
        self.width = width
        self._matrix = matrix
        self._rows = len(matrix) if matrix is not None else int(rows or 0)
        self._offset = 0

    def take(self, n: int) -> np.ndarray | None:
        """The next ``n`` vectors (an empty block of the right width for none; None when they follow)."""
        end = self._offset + n
        if end > self._rows:
            raise AssertionError(f"asked for vectors up to {end}, beyond the {self._rows} embedded")
        self._offset = end
        if self._matrix is None:
            return None
        return self._matrix[end - n : end] if n else np.zeros((0, self.width), np.float32)

    def done(self) -> None:
        """Check that every row was taken, then let the matrix go: the store has what it needs of it,
        and what follows (on Kùzu, the compacting rewrite of the whole index) is a run's peak of memory.
        Measured on a full index of Django whose vectors were all cached: 1.40 GB of RSS before the
        rewrite, 1.06 GB without the matrix (85,000 vectors and the garbage freed with them)."""
        if self._offset != self._rows:
            raise AssertionError(f"the write took {self._offset} of {self._rows} embedded vectors")
        self._matrix = None


@dataclass(frozen=True)
class Embedded:
    chunked: list[tuple[FileExtraction, Chunked]]  # the code files to rewrite (fresh or retimed)
    sections: dict[str, list[DocSection]]  # the changed documents' sections
    history: History
    vectors: Vectors  # one per text of ``_embeddable``, in its order
    model_seconds: float  # loading the tokenizer and the model, reported apart from embedding
    embedded: int  # texts the model embedded
    cached: int  # texts whose vector came from the cache
    probes: np.ndarray | None = None  # cg/ingest/baseline.py's PROBES, embedded
    targets: list[tuple[Target, str]] = field(default_factory=list)  # what each text's vector belongs to
    deferred: bool = False  # the nodes are written without vectors; fill_vectors sets them
    counter: TokenCounter = approx_tokens  # the token counter the chunks were cut with

    def written(self) -> None:
        """The write stored the texts' nodes: with their vectors, nothing needs the texts any more,
        so they go before the run ends (on Kùzu, its compacting rewrite is the run's peak of memory:
        with Django's chunk and definition texts let go, it started at 0.87 GB of RSS against
        0.95-0.99). Deferred vectors keep them for ``fill_vectors``."""
        if not self.deferred:
            self.chunked.clear()
            self.targets.clear()


def embed(
    planned: Plan, parsed: Parsed, embedder: Embedder, store: GraphWriter, progress: Progress, defer_any: bool = False
) -> Embedded:
    """Chunk the files to rewrite, split the changed documents, read the new commits, and embed them
    all (the model is loaded only when the cache misses a text), unless the misses are many
    (``DEFER_AT``) or ``defer_any``: then nothing is embedded here and the write stores the nodes
    without vectors."""
    settings = planned.settings
    rewrite = sorted(set(parsed.fresh) | set(planned.retimed))
    loading = time.perf_counter()
    counter = embedder.token_counter() if rewrite else approx_tokens
    model_seconds = time.perf_counter() - loading
    chunked = [
        (ex, chunk_file(ex, settings.chunk_tokens, counter, settings.max_chunks_per_file))
        for p in rewrite
        if (ex := parsed.extractions.get(p))
    ]
    sections = {s.path: split_document(s.path, s.data.decode("utf-8"), s.language) for s in planned.documents}
    history = read_history(settings.repo, settings.history_commits, planned.git_head, planned.saved, extractor_for)
    targets = _embeddable(chunked, sections, history.new, settings.embed_docstrings)
    texts = [t for _, t in targets]
    misses = _misses(embedder, texts)
    if misses and (defer_any or misses >= DEFER_AT):
        width = _width(store, embedder)
        vectors = Vectors(None, width, len(texts))
        return Embedded(chunked, sections, history, vectors, model_seconds, 0, 0, None, targets, True, counter)
    if misses:
        model_seconds += _load_model(embedder)
    with progress.stage("embed", len(texts)) as advance:
        matrix = embedder.embed(texts, advance)
    embedded, cached = embedder.embedded, embedder.cached
    width = int(matrix.shape[1]) if texts else _width(store, embedder)
    vectors = Vectors(matrix, width)
    return Embedded(chunked, sections, history, vectors, model_seconds, embedded, cached, None, targets, False, counter)


def _misses(embedder: Embedder, texts: list[str]) -> int:
    """How many distinct texts the embedding cache does not hold (the model must embed them)."""
    distinct = {content_hash(t) for t in texts}
    return len(distinct) - len(embedder.cache.get_many(embedder.cache_key, sorted(distinct)))


def _load_model(embedder: Embedder) -> float:
    """Load the model now, so its time is reported apart from embedding; the seconds it took."""
    loading = time.perf_counter()
    embedder.load()
    return time.perf_counter() - loading


def _width(store: GraphWriter, embedder: Embedder) -> int:
    """The vectors' width without embedding anything here: the stored one when the model is the same
    (nothing new to embed must not load the model just to learn it), else the embedder's."""
    stored = store.get_meta("dimension") if store.get_meta("model") == embedder.cache_key else None
    return int(stored) if stored else embedder.dimension


def _embeddable(
    chunked: list[tuple[FileExtraction, Chunked]],
    sections: dict[str, list[DocSection]],
    commits: list[CommitRecord],
    docstrings: bool,
) -> list[tuple[Target, str]]:
    """Every text to embed and the node property its vector goes to, in the order ``write`` takes
    the vectors: per code file its symbols, its chunks and (when embedded) its docstrings, then the
    documents' sections, then the commits."""
    out: list[tuple[Target, str]] = []
    for _, unit in chunked:
        retrievable = [s for s in unit.symbols if s.retrievable]
        out += [(("Symbol", "embedding", s.id), t) for s, t in zip(retrievable, unit.embed_texts, strict=True)]
        out += [(("Chunk", "embedding", c.id), c.text) for c in unit.chunks]
        if docstrings:
            out += [(("Symbol", "doc_embedding", s.id), s.docstring) for s in unit.symbols if s.docstring]
    for secs in sections.values():
        out += [(("Doc", "embedding", d.id), d.embed_text) for d in secs]
    out += [(("Commit", "embedding", c.id), c.message) for c in commits]
    return out


@dataclass(frozen=True)
class Filled:
    embedded: int
    cached: int
    model_seconds: float
    write_seconds: float  # of the run that sets them (on Kùzu, many are written by a rewrite)


def fill_vectors(
    settings: Settings,
    store: GraphWriter,
    embedder: Embedder,
    state: IndexState,
    spath: Path,
    embedded: Embedded | None,
    progress: Progress,
) -> Filled:
    """Compute the vectors of the files and commits the saved ``state`` lists as stored without them
    and set them, as a run of its own (readers see the graph without them until it ends, then with
    them). The texts are rebuilt from the state's records, the same ones the nodes were written from
    (their secrets already masked), except those ``embedded`` still holds from this run. The state's
    token protocol is the write's: a crash mid-way leaves a state the next run distrusts."""
    this_run = {ex.file.path for ex, _ in embedded.chunked} | set(embedded.sections) if embedded else set()
    targets = list(embedded.targets) if embedded and embedded.deferred else []
    older = [p for p in state.unembedded if p not in this_run and p in state.files]
    counter = embedded.counter if embedded else approx_tokens
    if any(state.files[p].extraction is not None for p in older) and counter is approx_tokens:
        counter = embedder.token_counter()  # the chunks must be cut as the write cut them
    chunked = [
        (
            fs.extraction,
            chunk_file(fs.extraction, settings.chunk_tokens, counter, settings.max_chunks_per_file, lexical=False),
        )
        for p in older
        if (fs := state.files[p]).extraction is not None
    ]
    sections = {p: state.files[p].sections for p in older if state.files[p].extraction is None}
    new_commits = {c.id for c in embedded.history.new} if embedded and embedded.deferred else set()
    commits = [state.commits[c] for c in state.unembedded_commits if c in state.commits and c not in new_commits]
    targets += _embeddable(chunked, sections, commits, settings.embed_docstrings)
    texts = [t for _, t in targets]
    groups: dict[tuple[str, str], tuple[list[str], list[int]]] = {}
    for row, ((label, prop, node_id), _) in enumerate(targets):
        ids, rows = groups.setdefault((label, prop), ([], []))
        ids.append(node_id)
        rows.append(row)
    del targets, chunked, sections  # the texts' only holders from here are ``texts``, dropped once embedded
    model_seconds = _load_model(embedder) if _misses(embedder, texts) else 0.0
    before = embedder.embedded, embedder.cached
    with progress.stage("vectors", len(texts)) as advance:
        matrix = embedder.embed(texts, advance)
    del texts  # the store's rewrite that follows is the run's peak of memory: it gets what they held
    done = embedder.embedded - before[0], embedder.cached - before[1]
    probes = embedder.embed(list(PROBES))
    started = time.perf_counter()
    with store.run(full=False, dimension=int(probes.shape[1])):
        store.set_meta("state_token", "")
        for (label, prop), (ids, rows) in groups.items():
            store.set_vectors(label, prop, ids, matrix[rows])
        del matrix  # the store holds its rows now
        write_null_cosine(store, probes)
        state.unembedded, state.unembedded_commits, state.token = [], [], new_token()
        _write_unembedded(store, state)
        save_state(spath, state)
        store.set_meta("state_token", state.token)
    return Filled(*done, model_seconds, time.perf_counter() - started)


def _write_unembedded(store: GraphWriter, state: IndexState) -> None:
    """What queries read to say their vector arm sees part of the index (cg/queries/query.py)."""
    store.set_meta("unembedded_files", str(len(state.unembedded)))
    store.set_meta("unembedded_commits", str(len(state.unembedded_commits)))


@dataclass(frozen=True)
class Written:
    files: dict[str, FileState]  # every file the index holds after the run
    pruned_externals: int


def write(
    planned: Plan,
    parsed: Parsed,
    resolved: Resolved,
    embedded: Embedded,
    store: GraphWriter,
    progress: Progress,
    failed: dict[str, str] | None = None,
) -> Written:
    """Write the run into the store as one run (``store.run``: a reader sees the previous graph until
    the run ends, then the new one whole), then save the state inside it. A run that does not build
    on the saved state starts from an empty graph. The state is saved just before the run ends: a
    crash between the two leaves a state whose token the store does not hold, so the next run is full.
    ``failed`` (path -> stage) is kept per file, so the next run tries those files again."""
    state, vectors = planned.state, embedded.vectors
    failed = failed or {}
    stored = set(state.files) if planned.trusted else set()  # a full run starts from an empty graph
    earlier = set(state.unembedded) if planned.trusted else set()  # files an earlier run left without vectors
    earlier_commits = set(state.unembedded_commits) if planned.trusted else set()
    with store.run(full=not planned.trusted, dimension=vectors.width):
        store.set_meta("model", planned.embedding)
        store.set_meta("state_token", "")
        unchanged = (p for p in planned.present if p in state.files and p not in planned.changed_paths)
        files = {p: state.files[p] for p in unchanged}  # then what this run rewrites
        rewritten = set(parsed.fresh) | set(planned.retimed)
        with progress.stage("write", len(embedded.chunked) + len(embedded.sections) + 2) as advance:
            store.delete_files(planned.removed)
            for ex, unit in embedded.chunked:
                path = ex.file.path
                if path in resolved.files:
                    res = resolved.files[path]
                else:  # only its commit time changed: its edges are the ones it had
                    res = Resolution(list(files[path].edges), files[path].externals)
                kept = _write_code(store, ex, unit, res, vectors, planned.settings.embed_docstrings, path not in stored)
                files[path] = replace(kept, failed=failed.get(path, ""))
                advance(1)
            for source in planned.documents:
                sections = embedded.sections[source.path]
                files[source.path] = _write_document(
                    store, source, sections, planned, vectors, source.path not in stored
                )
                advance(1)
            _write_retimed_documents(store, files, planned, vectors.width)
            written = _write_edges(store, files, resolved, rewritten, failed)
            advance(1)
            if _names_may_have_changed(planned, parsed):
                _write_mentions(
                    store, files, parsed.extractions, {s.path for s in planned.documents} if planned.trusted else None
                )
            history = embedded.history
            write_history(
                store, history, vectors.take(len(history.new)), written | set(planned.removed), not planned.trusted
            )
            vectors.done()
            pruned = store.prune_externals()
            advance(1)
        embedded.written()
        _write_lengths(store, files, history)
        if embedded.probes is not None:
            write_null_cosine(store, embedded.probes)  # explain's "nothing matches" baseline
        store.set_meta("indexed_at", time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        store.set_meta("head", planned.git_head)
        _keep_stats(files, planned.sources)
        state.files, state.commits, state.head, state.token = files, history.commits, planned.git_head, new_token()
        state.settings = planned.shaping
        now = rewritten | {s.path for s in planned.documents}
        later = now if embedded.deferred else set()
        state.unembedded = sorted(((earlier - now) | later) & set(files))
        later_commits = {c.id for c in history.new} if embedded.deferred else set()
        state.unembedded_commits = sorted((earlier_commits | later_commits) & set(history.commits))
        _write_unembedded(store, state)
        save_state(planned.state_path, state)
        store.set_meta("state_token", state.token)
    return Written(files, pruned)


def _keep_stats(files: dict[str, FileState], sources: list[SourceFile]) -> None:
    """Each file this run read keeps the stat it had when read (``walk.stat_key``; None when it had
    just changed), so the next run's walk can leave it unread; a file the walk did not read keeps its
    own."""
    for source in sources:
        record = files.get(source.path)
        if record is not None and record.stat != source.stat:
            files[source.path] = replace(record, stat=source.stat)


def _write_code(
    store: GraphWriter,
    ex: FileExtraction,
    unit: Chunked,
    res: Resolution,
    vectors: Vectors,
    docstrings: bool,
    new: bool = False,
) -> FileState:
    """One code file's nodes with their vectors (taken in ``_embeddable`` order); its state for the next run."""
    symbol_vectors = vectors.take(sum(1 for s in unit.symbols if s.retrievable))  # lambdas have none
    chunk_vectors = vectors.take(len(unit.chunks))
    docs = vectors.take(sum(1 for s in unit.symbols if s.docstring) if docstrings else 0)
    doc_vectors = iter(docs if docs is not None else ())
    per_symbol = [next(doc_vectors) if s.docstring and docstrings and docs is not None else None for s in unit.symbols]
    store.write_file(
        FileWrite(
            ex.file,
            unit.symbols,
            symbol_vectors,
            res.externals,
            chunks=unit.chunks,
            chunk_embeddings=chunk_vectors,
            doc_embeddings=per_symbol,
            new=new,
        )
    )
    lexical = [len(s.search_text.split()) for s in unit.symbols if s.retrievable]
    lexical += [len(c.search_text.split()) for c in unit.chunks]
    return FileState(
        ex.file.blob_sha,
        ex.file.committed_at,
        ex.file.language,
        ex,
        Edges(res.edges),
        res.externals,
        lexical,
        len(unit.chunks),
    )


def _write_edges(
    store: GraphWriter, files: dict[str, FileState], resolved: Resolved, rewritten: set[str], failed: dict[str, str]
) -> set[str]:
    """Every rewritten file lost its outgoing edges: lay them again; the affected files get theirs
    replaced. Returns the files whose edges were written."""
    again = sorted(resolved.affected - rewritten)
    store.delete_edges(again)
    for path in again:
        res = resolved.files[path]
        files[path] = replace(files[path], edges=Edges(res.edges), externals=res.externals, failed=failed.get(path, ""))
    written = rewritten | set(again)
    store.write_edges(
        [e for p in sorted(written) for e in files[p].edges], [x for p in again for x in files[p].externals]
    )
    return written


def _write_document(
    store: GraphWriter, source: SourceFile, sections: list[DocSection], planned: Plan, vectors: Vectors, new: bool
) -> FileState:
    """A changed document: its File node and its sections with their vectors."""
    record = _record(source, source.data, planned.committed.get(source.path, 0))
    store.write_file(FileWrite(record, [], np.zeros((0, vectors.width), np.float32), new=new))
    store.write_docs(source.path, sections, vectors.take(len(sections)), new=new)
    return FileState(record.blob_sha, record.committed_at, record.language, sections=sections)


def _write_retimed_documents(store: GraphWriter, files: dict[str, FileState], planned: Plan, width: int) -> None:
    """Documents whose content is the same but whose newest commit is another: only their File node
    carries the time (retimed code files are rewritten whole, with their symbols)."""
    for path in planned.retimed:
        if files[path].extraction is None:
            fs = files[path] = replace(files[path], committed_at=planned.committed.get(path, 0))
            loc = fs.sections[-1].end_line if fs.sections else 0
            record = FileRecord(path, fs.language, "docs", fs.sha, loc, committed_at=fs.committed_at)
            store.write_file(FileWrite(record, [], np.zeros((0, width), np.float32)))


def _write_lengths(store: GraphWriter, files: dict[str, FileState], history: History) -> None:
    """BM25's N and average length per searchable kind (cg/queries/search.py), over the whole index."""
    for key, lengths in (
        ("lexical", [n for fs in files.values() for n in fs.lexical]),
        ("doc", [len(d.search_text.split()) for fs in files.values() for d in fs.sections]),
        ("commit", [len(c.search_text.split()) for c in history.commits.values()]),
    ):
        store.set_meta(f"{key}_docs", str(len(lengths)))
        store.set_meta(f"{key}_avgdl", f"{(sum(lengths) / len(lengths)) if lengths else 0.0:.4f}")


def _totals(summary: IndexSummary, files: dict[str, FileState], report: WalkReport) -> None:
    """The counts of the whole index after the run (not of this run's delta)."""
    summary.files = len(files)
    summary.languages = dict(Counter(fs.language for fs in files.values()).most_common())
    summary.symbols = sum(len(fs.extraction.symbols) for fs in files.values() if fs.extraction)
    summary.chunks = sum(fs.chunks for fs in files.values())
    summary.doc_sections = sum(len(fs.sections) for fs in files.values())
    # counted by kind, from each file's counts: a one-file edit of Django would otherwise decode and
    # count 218,000 edges (see state.Edges)
    by_type: Counter[str] = Counter()
    for kind, dst_label, resolved_by, n in (k for fs in files.values() for k in fs.edges.counts()):
        by_type[kind] += n
        if kind != "CALLS":
            continue
        if dst_label == "Symbol":
            summary.calls_in_repo += n
        elif not ResolvedBy(resolved_by).resolved:
            summary.calls_unresolved += n
            summary.calls_ambiguous += n if resolved_by == ResolvedBy.AMBIGUOUS else 0
        else:
            summary.calls_external += n
    summary.edges = dict(by_type)
    summary.call_sites = sum(len(fs.extraction.calls) for fs in files.values() if fs.extraction)
    summary.binary, summary.not_utf8 = report.binary, report.not_utf8
    summary.too_large, summary.unreadable = report.too_large, report.unreadable
    summary.secret_files = report.secret_files
    summary.other_files, summary.ignored = report.other_text, report.ignored


def _names_may_have_changed(planned: Plan, parsed: Parsed) -> bool:
    """Whether this run can change a document's mentions: a full run, a document changed or removed,
    or a code file whose mentionable names (``mentionable``) differ from the saved ones. A body-only
    edit changes none, and the lookup of every document's names against every symbol is skipped."""
    if not planned.trusted or planned.documents or planned.removed:
        return True
    saved = planned.state.files
    for path, ex in parsed.fresh.items():
        before = saved[path].extraction if path in saved else None
        if before is None or mentionable(before.symbols) != mentionable(ex.symbols):
            return True
    return False


def _write_mentions(
    store: GraphWriter,
    files: dict[str, FileState],
    extractions: dict[str, FileExtraction],
    rewritten: set[str] | None,
) -> None:
    """MENTIONS depend on every symbol in the repo: recomputed each run (cheap), written for the
    documents this run rewrote (all of them when ``rewritten`` is None) and wherever they differ
    from what the index holds."""
    docs = {p: fs for p, fs in files.items() if fs.sections}
    if not docs:
        return
    index = MentionIndex(s for ex in extractions.values() for s in ex.symbols)
    paths: list[str] = []
    pairs: list[tuple[str, str]] = []
    for path, fs in sorted(docs.items()):
        now = [(d.id, sid) for d in fs.sections for sid in index.mentions(d.text)]
        if rewritten is None or path in rewritten or now != fs.mentions:
            paths.append(path)
            pairs.extend(now)
            files[path] = replace(fs, mentions=now)
    store.write_mentions(paths, pairs)
