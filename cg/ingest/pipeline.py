"""Orchestrates one index run: walk -> extract -> resolve -> chunk -> embed -> write.

Parse trees never outlive their file: extraction keeps plain records only. The summary counts every
stage (files, definitions, edges, share of call sites resolved in the repo, files skipped and why),
so an incomplete graph never looks like a finished one.
"""

from __future__ import annotations

import resource
import time
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import numpy as np

from cg.config import Settings
from cg.graph.embed import Embedder
from cg.graph.model import Edge, External, FileExtraction, FileRecord
from cg.graph.store import FileWrite, GraphStore
from cg.ingest.chunk import chunk_file
from cg.ingest.languages import Extractors
from cg.ingest.resolve.generic import GenericResolver
from cg.ingest.resolve.jedi_resolver import JediResults, run_jedi
from cg.ingest.resolve.names import Resolver, property_names
from cg.ingest.walk import CONFIG_LANGUAGES, WalkReport, is_test_path, module_name, walk


class Progress(Protocol):
    def stage(self, name: str, total: int) -> AbstractContextManager[Callable[[int], None]]: ...


class _Silent:
    def stage(self, name: str, total: int) -> AbstractContextManager[Callable[[int], None]]:
        return nullcontext(lambda n: None)


@dataclass
class IndexSummary:
    repo: str
    backend: str
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


def _record(source, data: bytes) -> FileRecord:
    return FileRecord(
        path=source.path,
        language=source.language,
        kind="config" if source.language in CONFIG_LANGUAGES else "test" if is_test_path(source.path) else "source",
        blob_sha=source.blob_sha,
        loc=data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1),
        module=module_name(source.path) if source.language == "python" else "",
    )


def extract_repository(
    settings: Settings, progress: Progress | None = None, summary: IndexSummary | None = None
) -> tuple[list[FileExtraction], WalkReport]:
    """Walk and parse: plain records for every indexable file (no parse tree survives its file)."""
    progress = progress or _Silent()
    report = WalkReport()
    extractors = Extractors()
    extractions: list[FileExtraction] = []
    sources = list(walk(settings.repo, report, settings.max_file_bytes))
    with progress.stage("parse", len(sources)) as advance:
        for source in sources:
            ex = extractors.get(source.language).extract(_record(source, source.data), source.data)
            if ex.warnings and summary is not None:
                summary.syntax_errors.extend(f"{source.path}: {w}" for w in ex.warnings)
            extractions.append(ex)
            advance(1)
    return extractions, report


def resolve_extractions(
    settings: Settings,
    extractions: list[FileExtraction],
    progress: Progress | None = None,
    summary: IndexSummary | None = None,
) -> tuple[list[Edge], dict[str, list[External]]]:
    """Python: jedi (when configured) then the name resolver; the other languages: the generic
    resolver (cg/ingest/resolve/generic.py). Every file's edges and the externals they name."""
    progress = progress or _Silent()
    jedi: JediResults | None = None
    python = [ex for ex in extractions if ex.file.language == "python"]
    others = [ex for ex in extractions if ex.file.language != "python"]
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
    resolver = Resolver(python, jedi)
    generic = GenericResolver(others, settings.repo) if others else None
    edges: list[Edge] = []
    externals_by_file: dict[str, list[External]] = {}
    for ex in extractions:
        file_edges, externals = (resolver if ex.file.language == "python" or generic is None else generic).edges(ex)
        edges.extend(file_edges)
        externals_by_file[ex.file.path] = externals
    return edges, externals_by_file


def index_repository(
    settings: Settings, store: GraphStore, embedder: Embedder, progress: Progress | None = None
) -> IndexSummary:
    progress = progress or _Silent()
    summary = IndexSummary(repo=str(settings.repo), backend=store.backend)
    started = time.perf_counter()
    extractions, report = extract_repository(settings, progress, summary)
    summary.seconds["parse"] = time.perf_counter() - started

    started = time.perf_counter()
    edges, externals_by_file = resolve_extractions(settings, extractions, progress, summary)
    summary.seconds["resolve"] = time.perf_counter() - started - summary.seconds.get("jedi", 0.0)

    started = time.perf_counter()
    counter = embedder.token_counter()
    embed_docs = settings.weight_doc > 0  # the docstring arm is off by default: do not pay for it
    chunked = [(ex, chunk_file(ex, settings.chunk_tokens, counter)) for ex in extractions]
    # one embedding pass over everything: definition units, extra chunks and docstrings (the cache
    # makes repeated texts free)
    texts: list[str] = []
    for _, unit in chunked:
        texts.extend(unit.embed_texts)
        texts.extend(c.text for c in unit.chunks)
        if embed_docs:
            texts.extend(s.docstring for s in unit.symbols if s.docstring)
    with progress.stage("embed", len(texts)) as advance:
        vectors = embedder.embed(texts, advance)
    summary.embedded, summary.embed_cached = embedder.embedded, embedder.cached
    summary.seconds["embed"] = time.perf_counter() - started

    started = time.perf_counter()
    dimension = int(vectors.shape[1]) if len(texts) else embedder.dimension
    if store.get_meta("model") not in (None, embedder.cache_key):  # other vectors: they must not mix
        store.reset()
    store.ensure_schema(dimension)
    store.set_meta("model", embedder.cache_key)
    present = {ex.file.path for ex in extractions}
    gone = [path for path in store.file_shas() if path not in present]
    store.delete_files(gone)
    summary.removed_files = len(gone)
    offset = 0

    def take(n: int) -> np.ndarray:
        nonlocal offset
        block = vectors[offset : offset + n] if n else np.zeros((0, dimension), np.float32)
        offset += n
        return block

    lengths: list[int] = []
    with progress.stage("write", len(chunked) + 1) as advance:
        for ex, unit in chunked:
            symbol_vectors = take(len(unit.symbols))
            chunk_vectors = take(len(unit.chunks))
            doc_vectors = iter(take(sum(1 for s in unit.symbols if s.docstring) if embed_docs else 0))
            docs = [next(doc_vectors) if s.docstring and embed_docs else None for s in unit.symbols]
            store.write_file(
                FileWrite(
                    ex.file,
                    unit.symbols,
                    symbol_vectors,
                    externals_by_file.get(ex.file.path, []),
                    chunks=unit.chunks,
                    chunk_embeddings=chunk_vectors,
                    doc_embeddings=docs,
                )
            )
            lengths.extend(len(s.search_text.split()) for s in unit.symbols)
            lengths.extend(len(c.search_text.split()) for c in unit.chunks)
            advance(1)
        store.write_edges(edges)
        advance(1)
    store.set_meta("lexical_docs", str(len(lengths)))
    store.set_meta("lexical_avgdl", f"{(sum(lengths) / len(lengths)) if lengths else 0.0:.4f}")
    store.set_meta("indexed_at", time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    summary.seconds["write"] = time.perf_counter() - started

    summary.files = len(extractions)
    summary.languages = dict(Counter(ex.file.language for ex in extractions).most_common())
    summary.symbols = sum(len(unit.symbols) for _, unit in chunked)
    summary.chunks = sum(len(unit.chunks) for _, unit in chunked)
    summary.edges = dict(Counter(e.type for e in edges))
    summary.call_sites = sum(len(ex.calls) for ex in extractions)
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
    summary.peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return summary
