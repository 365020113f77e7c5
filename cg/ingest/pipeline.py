"""Orchestrates one index run: walk -> extract -> resolve -> chunk -> embed -> write.

Parse trees never outlive their file: extraction keeps plain records only. The summary counts every
stage (files, definitions, edges, share of call sites resolved in the repo, files skipped and why),
so an incomplete graph never looks like a finished one.
"""

from __future__ import annotations

import re
import resource
import time
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from cg.config import Settings
from cg.embed import Embedder, content_hash
from cg.graph.store import SCHEMA_VERSION, FileWrite, GraphStore
from cg.ingest import git
from cg.ingest.chunk import chunk_file
from cg.ingest.docs import MentionIndex, split_document
from cg.ingest.languages import Extractors
from cg.ingest.resolve.generic import GenericResolver
from cg.ingest.resolve.jedi_resolver import JediResults, run_jedi
from cg.ingest.resolve.python import Resolver, property_names
from cg.ingest.state import (
    FileState,
    IndexState,
    fingerprint,
    index_settings,
    load_state,
    new_token,
    save_state,
    state_path,
)
from cg.ingest.walk import DOC_LANGUAGES, WalkReport, file_kind, language_for, module_name, walk
from cg.lexical import analyze_text
from cg.model import CommitRecord, Edge, External, FileExtraction, FileRecord


class Progress(Protocol):
    def stage(self, name: str, total: int) -> AbstractContextManager[Callable[[int], None]]: ...


class _Silent:
    def stage(self, name: str, total: int) -> AbstractContextManager[Callable[[int], None]]:
        return nullcontext(lambda n: None)


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
    other_files: int = 0
    ignored: int = 0
    resolver: str = "name"
    jedi_sites: int = 0
    jedi_answered: int = 0
    jedi_workers: int = 0
    jedi_timed_out: list[str] = field(default_factory=list)
    jedi_failed: list[str] = field(default_factory=list)
    embedded: int = 0
    embed_cached: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    peak_rss_mb: float = 0.0

    @property
    def resolved_share(self) -> float:
        """Share of call edges that land on a definition in the repo or a named library target."""
        total = self.calls_in_repo + self.calls_external + self.calls_unresolved
        return (self.calls_in_repo + self.calls_external) / total if total else 1.0

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["resolved_share"] = round(self.resolved_share, 4)
        return data


def _record(source, data: bytes, committed_at: int = 0) -> FileRecord:
    return FileRecord(
        path=source.path,
        language=source.language,
        kind=file_kind(source.path, source.language),
        blob_sha=source.blob_sha,
        loc=data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1),
        module=module_name(source.path) if source.language == "python" else "",
        committed_at=committed_at,
    )


_EXTRACTORS = Extractors()


def extractor_for(language: str):
    """The extractor of a code or config language, or None (documents are split, not parsed)."""
    if not language or language in DOC_LANGUAGES:
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
    return _extract(sources, {}, progress or _Silent(), summary), report


def _extract(
    sources: list, committed: dict[str, int], progress: Progress, summary: IndexSummary | None
) -> list[FileExtraction]:
    extractions: list[FileExtraction] = []
    with progress.stage("parse", len(sources)) as advance:
        for source in sources:
            extractor = extractor_for(source.language)
            ex = extractor.extract(_record(source, source.data, committed.get(source.path, 0)), source.data)
            if ex.warnings and summary is not None:
                summary.syntax_errors.extend(f"{source.path}: {w}" for w in ex.warnings)
            extractions.append(ex)
            advance(1)
    return extractions


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
) -> dict[str, Resolution]:
    """Edges and externals of the files in ``targets`` (every file when None), resolved against the
    whole repository's ``extractions``: Python with jedi (when configured) then the name resolver,
    the other languages with the generic resolver (cg/ingest/resolve/generic.py). jedi is asked about
    every position of a target file, never a subset: it caps how often it infers one function per
    script, so which other sites of a file are asked changes the answer at a site, and a subset
    would not give what a full run gives."""
    progress = progress or _Silent()
    jedi: JediResults | None = None
    chosen = [ex for ex in extractions if targets is None or ex.file.path in targets]
    python = [ex for ex in chosen if ex.file.language == "python"]
    if settings.resolver == "jedi" and python:
        with progress.stage("jedi", len(python)) as advance:
            jedi = run_jedi(
                settings.repo, python, property_names(extractions), settings.jedi_workers, settings.jedi_budget, advance
            )
        if summary is not None:
            report = jedi.report
            summary.jedi_sites, summary.jedi_answered, summary.jedi_workers = (
                report.sites,
                report.answered,
                report.workers,
            )
            summary.jedi_timed_out, summary.jedi_failed = report.timed_out, report.failed
            summary.seconds["jedi"] = report.seconds
    if summary is not None:
        summary.resolver = settings.resolver
    resolver = Resolver([ex for ex in extractions if ex.file.language == "python"], jedi)
    others = [ex for ex in extractions if ex.file.language != "python"]
    generic = GenericResolver(others, settings.repo) if others else None
    out: dict[str, Resolution] = {}
    for ex in chosen:
        chosen_resolver = resolver if ex.file.language == "python" or generic is None else generic
        out[ex.file.path] = Resolution(*chosen_resolver.edges(ex))
    return out


def index_repository(
    settings: Settings,
    store: GraphStore,
    embedder: Embedder,
    progress: Progress | None = None,
    full: bool = False,
    since: str | None = None,
) -> IndexSummary:
    """Bring the index up to date with the working tree: only what changed, unless ``full`` or the
    saved state cannot be trusted (see cg/ingest/state.py and docs/freshness.md)."""
    progress = progress or _Silent()
    summary = IndexSummary(repo=str(settings.repo), backend=store.backend)
    started = time.perf_counter()
    repo = settings.repo
    git_head = git.head(repo)
    spath = state_path(settings.index_dir, store.backend)
    shaping = index_settings(settings, embedder.cache_key)
    fp = fingerprint(*shaping.values())
    state = None if full else load_state(spath)
    trusted = (
        state is not None
        and state.fingerprint == fp
        and bool(state.token)
        and state.token == store.get_meta("state_token")
        and store.get_meta("model") == embedder.cache_key
        and store.get_meta("schema") == SCHEMA_VERSION
    )
    if since is not None and not git_head:
        raise git.GitError("--since needs a git repository")
    if not trusted:
        state = IndexState(fingerprint=fp, settings=shaping)
    assert state is not None
    summary.mode = "incremental" if trusted else "full"

    # -- plan: what is on disk now, what changed -------------------------------------------------
    report = WalkReport()
    only = git.changed_since(repo, since) if since is not None and trusted else None
    sources = list(walk(repo, report, settings.max_file_bytes, only=only))
    on_disk = {s.path: s for s in sources}
    if only is None:
        present = set(on_disk)
    else:  # --since: files outside the diff are taken as they were
        present = (set(state.files) - only) | set(on_disk)
    committed = git.last_commit_times(repo, present) if git_head else {}
    stored = set(state.files) if trusted else set(store.file_shas())
    removed = sorted(stored - present)
    changed = [s for s in sources if not trusted or s.path not in state.files or state.files[s.path].sha != s.blob_sha]
    changed_paths = {s.path for s in changed}
    retimed = sorted(
        p
        for p in present - changed_paths
        if trusted and p in state.files and state.files[p].committed_at != committed.get(p, 0)
    )
    summary.added = sum(1 for s in changed if s.path not in state.files)
    summary.changed = len(changed) - summary.added
    summary.removed_files = len(removed)

    # -- parse: changed code files; everything else comes from the state -------------------------
    code = [s for s in changed if extractor_for(s.language)]
    docs = [s for s in changed if s.language in DOC_LANGUAGES]
    fresh = {ex.file.path: ex for ex in _extract(code, committed, progress, summary)}
    extractions: dict[str, FileExtraction] = {}
    for path in sorted(present):
        if path in fresh:
            extractions[path] = fresh[path]
        elif path not in changed_paths and path in state.files and state.files[path].extraction is not None:
            ex = state.files[path].extraction
            if path in retimed:
                ex = replace(ex, file=replace(ex.file, committed_at=committed.get(path, 0)))
            extractions[path] = ex
    summary.seconds["parse"] = time.perf_counter() - started

    # -- resolve: changed files and the unchanged ones whose edges may now point elsewhere --------
    started = time.perf_counter()
    touched = changed_paths | set(removed)
    affected = _affected(state, extractions, fresh, touched) if trusted else set()
    summary.affected = len(affected)
    targets = set(fresh) | affected
    resolved = resolve_files(settings, list(extractions.values()), targets, progress, summary) if targets else {}
    summary.seconds["resolve"] = time.perf_counter() - started - summary.seconds.get("jedi", 0.0)

    # -- chunk and embed what is new --------------------------------------------------------------
    started = time.perf_counter()
    rewrite = [extractions[p] for p in sorted(set(fresh) | set(retimed)) if p in extractions]
    loading = time.perf_counter()
    counter = embedder.token_counter() if rewrite else None
    model_seconds = time.perf_counter() - loading
    embed_docs = settings.weight_doc > 0  # the docstring arm is off by default: do not pay for it
    chunked = [(ex, chunk_file(ex, settings.chunk_tokens, counter)) for ex in rewrite]
    sections = {s.path: split_document(s.path, s.data.decode("utf-8"), s.language) for s in docs}
    history = _history(repo, settings.history_commits, state, git_head, trusted)
    texts: list[str] = []
    for _, unit in chunked:
        texts.extend(unit.embed_texts)
        texts.extend(c.text for c in unit.chunks)
        if embed_docs:
            texts.extend(s.docstring for s in unit.symbols if s.docstring)
    for secs in sections.values():
        texts.extend(d.embed_text for d in secs)
    texts.extend(c.message for c in history.new)
    if len(embedder.cache.get_many(embedder.cache_key, [content_hash(t) for t in set(texts)])) < len(set(texts)):
        loading = time.perf_counter()
        embedder.load()  # here, so its time is reported apart from embedding
        model_seconds += time.perf_counter() - loading
    with progress.stage("embed", len(texts)) as advance:
        vectors = embedder.embed(texts, advance)
    summary.embedded, summary.embed_cached = embedder.embedded, embedder.cached
    summary.seconds["model"] = model_seconds
    summary.seconds["embed"] = time.perf_counter() - started - model_seconds

    # -- write ------------------------------------------------------------------------------------
    started = time.perf_counter()
    if len(texts):
        dimension = int(vectors.shape[1])
    else:  # nothing new to embed: do not load the model just to learn its width
        stored_dimension = store.get_meta("dimension") if store.get_meta("model") == embedder.cache_key else None
        dimension = int(stored_dimension) if stored_dimension else embedder.dimension
    if store.get_meta("model") not in (None, embedder.cache_key):  # other vectors: they must not mix
        store.reset()
    store.ensure_schema(dimension)
    store.set_meta("model", embedder.cache_key)
    store.set_meta("state_token", "")  # a run that dies from here on leaves an index the next run rebuilds
    offset = 0

    def take(n: int) -> np.ndarray:
        nonlocal offset
        block = vectors[offset : offset + n] if n else np.zeros((0, dimension), np.float32)
        offset += n
        return block

    files: dict[str, FileState] = {p: state.files[p] for p in present if p in state.files and p not in changed_paths}
    with progress.stage("write", len(chunked) + len(sections) + 2) as advance:
        store.delete_files(removed)
        for ex, unit in chunked:
            symbol_vectors = take(len(unit.symbols))
            chunk_vectors = take(len(unit.chunks))
            doc_vectors = iter(take(sum(1 for s in unit.symbols if s.docstring) if embed_docs else 0))
            docs_vecs = [next(doc_vectors) if s.docstring and embed_docs else None for s in unit.symbols]
            if ex.file.path in resolved:
                res = resolved[ex.file.path]
            else:  # only its commit time changed: its edges are the ones it had
                fs = files[ex.file.path]
                res = Resolution(fs.edges, fs.externals)
            edges, externals = res.edges, res.externals
            store.write_file(
                FileWrite(
                    ex.file,
                    unit.symbols,
                    symbol_vectors,
                    externals,
                    chunks=unit.chunks,
                    chunk_embeddings=chunk_vectors,
                    doc_embeddings=docs_vecs,
                )
            )
            files[ex.file.path] = FileState(
                ex.file.blob_sha,
                ex.file.committed_at,
                ex.file.language,
                ex,
                edges,
                externals,
                [len(s.search_text.split()) for s in unit.symbols] + [len(c.search_text.split()) for c in unit.chunks],
                len(unit.chunks),
            )
            advance(1)
        for source in docs:
            secs = sections[source.path]
            record = _record(source, source.data, committed.get(source.path, 0))
            store.write_file(FileWrite(record, [], np.zeros((0, dimension), np.float32)))
            store.write_docs(source.path, secs, take(len(secs)))
            files[source.path] = FileState(record.blob_sha, record.committed_at, record.language, sections=secs)
            advance(1)
        for path in retimed:
            if files[path].extraction is None:  # a document: only its File node carries the time
                fs = files[path] = replace(files[path], committed_at=committed.get(path, 0))
                loc = fs.sections[-1].end_line if fs.sections else 0
                record = FileRecord(path, fs.language, "docs", fs.sha, loc, committed_at=fs.committed_at)
                store.write_file(FileWrite(record, [], np.zeros((0, dimension), np.float32)))
        # edges: every rewritten file lost its outgoing edges; affected files get theirs replaced
        kept = sorted(affected - set(fresh) - set(retimed))
        store.delete_edges(kept)
        for path in kept:
            res = resolved[path]
            files[path] = replace(files[path], edges=res.edges, externals=res.externals)
        written = set(fresh) | set(retimed) | set(kept)
        store.write_edges(
            [e for p in sorted(written) for e in files[p].edges],
            [x for p in kept for x in files[p].externals],
        )
        advance(1)
        _write_mentions(store, files, extractions, None if not trusted else {s.path for s in docs})
        _write_history(store, history, take(len(history.new)), written | set(removed), full=not trusted)
        state.commits = history.commits
        summary.pruned_externals = store.prune_externals()
        advance(1)
    for key, lengths in (
        ("lexical", [n for fs in files.values() for n in fs.lexical]),
        ("doc", [len(d.search_text.split()) for fs in files.values() for d in fs.sections]),
        ("commit", [len(c.search_text.split()) for c in history.commits.values()]),
    ):  # BM25's N and average length per searchable kind (cg/queries/search.py)
        store.set_meta(f"{key}_docs", str(len(lengths)))
        store.set_meta(f"{key}_avgdl", f"{(sum(lengths) / len(lengths)) if lengths else 0.0:.4f}")
    store.set_meta("indexed_at", time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    store.set_meta("head", git_head)
    state.files, state.head, state.token = files, git_head, new_token()
    state.settings = shaping
    save_state(spath, state)
    store.set_meta("state_token", state.token)
    summary.seconds["write"] = time.perf_counter() - started

    _totals(summary, files, report)
    summary.commits, summary.commits_new = len(history.commits), len(history.new)
    summary.peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return summary


def _totals(summary: IndexSummary, files: dict[str, FileState], report: WalkReport) -> None:
    """The counts of the whole index after the run (not of this run's delta)."""
    summary.files = len(files)
    summary.languages = dict(Counter(fs.language for fs in files.values()).most_common())
    summary.symbols = sum(len(fs.extraction.symbols) for fs in files.values() if fs.extraction)
    summary.chunks = sum(fs.chunks for fs in files.values())
    summary.doc_sections = sum(len(fs.sections) for fs in files.values())
    edges = [e for fs in files.values() for e in fs.edges]
    summary.edges = dict(Counter(e.type for e in edges))
    summary.call_sites = sum(len(fs.extraction.calls) for fs in files.values() if fs.extraction)
    for e in edges:
        if e.type != "CALLS":
            continue
        if e.dst_label == "Symbol":
            summary.calls_in_repo += 1
        elif e.resolved_by in ("unresolved", "ambiguous"):
            summary.calls_unresolved += 1
            summary.calls_ambiguous += e.resolved_by == "ambiguous"
        else:
            summary.calls_external += 1
    summary.binary, summary.not_utf8 = report.binary, report.not_utf8
    summary.too_large, summary.unreadable = report.too_large, report.unreadable
    summary.other_files, summary.ignored = report.other_text, report.ignored


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _interface(ex: FileExtraction | None) -> dict[str, tuple]:
    """What other files can see of a file, keyed so that old and new versions compare: every
    definition (name, kind, signature, decorators), every typed name (module variables and
    attributes, with their type), every name it imports (a re-export to its importers) and every
    base class. The first element of each value is the name other files would write."""
    if ex is None:
        return {}
    out: dict[str, tuple] = {}
    for s in ex.symbols:
        if s.kind != "module":
            out[f"def {s.id}"] = (s.name, s.kind, s.signature, s.decorators, s.parent_id)
    for t in ex.assignments:
        out[f"var {t.scope_id} {t.name}"] = (t.name.removeprefix("self."), t.type_expr)
    for i in ex.imports:
        out[f"import {i.local_name}"] = (i.local_name, i.module, i.name, i.level)
    for name, local in ex.exports.items():
        out[f"export {name}"] = (name, local)
    for b in ex.bases:
        out[f"base {b.class_id} {b.expr}"] = (b.class_id.rsplit(".", 1)[-1].rsplit("::", 1)[-1], b.expr)
    return out


def _sites(ex: FileExtraction) -> list[set[str]]:
    """The identifiers of every expression resolution looks at: callees, imports, bases, property reads."""
    out = [set(_WORD.findall(c.callee)) for c in ex.calls]
    out += [set(_WORD.findall(f"{i.module} {i.name} {i.alias}")) for i in ex.imports]
    out += [set(_WORD.findall(b.expr)) for b in ex.bases]
    out += [{r.attr} for r in ex.attribute_reads]
    return out


def _affected(
    state: IndexState,
    extractions: dict[str, FileExtraction],
    fresh: dict[str, FileExtraction],
    touched: set[str],
) -> set[str]:
    """Unchanged files whose edges may change because of the ``touched`` files (changed, added or
    removed), found by comparing each touched file's old and new version:

    - a name whose definition, type, import or bases appeared, vanished or changed shape: every
      file that writes that name is re-resolved (a renamed function must lose its callers' edges, a
      new one must gain them, a dropped re-export must break its importers');
    - a definition that vanished or whose body changed: every file with an edge into it is
      re-resolved (jedi infers through bodies: what ``make()`` returns decides what ``make().run()``
      calls), as is every file with an edge into a removed file.

    A body-only edit thus costs its callers, not every file that imports the module. See
    docs/freshness.md for what this leaves out and why."""
    names: set[str] = set()
    targets: set[str] = set()
    for path in touched:
        before = state.files[path].extraction if path in state.files else None
        after = fresh.get(path)
        if before is None and after is None:  # a document: nothing resolves against it
            continue
        old, new = _interface(before), _interface(after)
        names.update(old[k][0] for k in old if new.get(k) != old[k])
        names.update(new[k][0] for k in new if old.get(k) != new[k])
        if before is None or after is None:  # a module appeared or vanished
            names.add(((before or after).file.module or path).rsplit(".", 1)[-1])
            targets.add(path)
        old_text = {s.id: s.text for s in before.symbols} if before else {}
        new_text = {s.id: s.text for s in after.symbols} if after else {}
        targets.update(sid for sid, text in old_text.items() if new_text.get(sid) != text)
    names.discard("")
    out: set[str] = set()
    for path, ex in extractions.items():
        if path in touched or path not in state.files:
            continue
        if any(e.dst in targets or e.dst.split("::", 1)[0] in targets for e in state.files[path].edges):
            out.add(path)
        elif any(words & names for words in _sites(ex)):
            out.add(path)
    return out


def _write_mentions(
    store: GraphStore,
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


@dataclass
class _History:
    commits: dict[str, CommitRecord] = field(default_factory=dict)  # the window, newest first
    new: list[CommitRecord] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)


def _history(repo, limit: int, state: IndexState, git_head: str, trusted: bool) -> _History:
    """The newest ``limit`` commits; the ones the state already has keep their touches."""
    if not git_head or limit <= 0:
        return _History(gone=sorted(state.commits) if trusted else [])
    if trusted and git_head == state.head:
        return _History(commits=state.commits)
    infos = git.recent_commits(repo, limit)
    known = state.commits if trusted else {}
    todo = [i for i in infos if i.sha not in known]
    specs = sorted({f"{i.sha}:{p}" for i in todo for p in i.hunks if extractor_for(language_for(p) or "")})
    blobs = git.blobs_at(repo, specs)
    commits: dict[str, CommitRecord] = {}
    new: list[CommitRecord] = []
    for info in infos:
        if info.sha in known:
            commits[info.sha] = known[info.sha]
            continue
        touches: list[tuple[str, str]] = []
        for path, ranges in sorted(info.hunks.items()):
            touches.append((path, ""))
            data = blobs.get(f"{info.sha}:{path}")
            language = language_for(path) or ""
            if data is None or not extractor_for(language):
                continue
            record = FileRecord(path, language, "source", "", 0, module_name(path) if language == "python" else "")
            for sym in extractor_for(language).extract(record, data).symbols:
                if sym.kind != "module" and any(a <= sym.end_line and b >= sym.start_line for a, b in ranges):
                    touches.append((path, sym.id))
        record = CommitRecord(
            id=info.sha,
            short=info.short,
            author=info.author,
            committed_at=info.committed_at,
            subject=info.subject,
            message=info.message,
            search_text=analyze_text(info.message),
            touches=tuple(touches),
        )
        commits[info.sha] = record
        new.append(record)
    gone = sorted(set(known) - set(commits)) if trusted else []
    return _History(commits, new, gone)


def _write_history(store: GraphStore, history: _History, vectors: np.ndarray, rewritten: set[str], full: bool) -> None:
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
