"""The front door: one session over an index, for the CLI, the benchmarks, a notebook or an MCP server.

    with open_index("path/to/repo") as index:
        print(index.explain("how is a failed payment retried?").as_dict())

``open_index`` finds the repository, reads its settings, opens the store once and closes it on the
way out; the embedding model is made only when a method needs it, and once. Every method returns a
result with ``as_dict()`` (the JSON ``cg ... --json`` prints). Errors a user can cause are ``CgError``s.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cg.config import Settings, find_repo, load_settings
from cg.embed import Embedder, embedder_for
from cg.errors import UserError
from cg.graph.backends import open_store
from cg.graph.store import GraphStore
from cg.queries.changes import Changes
from cg.queries.evaluate import EvalReport, Question, evaluate, load_questions
from cg.queries.explain import Explanation, explain
from cg.queries.impact import Impact, impact
from cg.queries.lookup import resolve_symbol
from cg.queries.neighbours import Neighbours, neighbours
from cg.queries.paths import Paths, call_paths
from cg.queries.query import Query, Ranking
from cg.queries.search import SearchResult, search
from cg.queries.sources import DocHits, by_question

if TYPE_CHECKING:
    import threading

    from cg.ingest.pipeline import IndexSummary, Progress
    from cg.ingest.status import Status
    from cg.ingest.watch import Pass

Ref = str | dict[str, Any]  # what names a definition: text a user types, or a node an answer returned


def quiet_model_loading() -> None:
    """Keep the model libraries' progress bars and warnings off the terminal (set before they load)."""
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def settings_for(repo: Path | str | None = None, backend: str | None = None, **overrides: Any) -> Settings:
    """The settings of ``repo`` (default: the repository around the current directory), with
    ``backend`` and ``overrides`` on top; a missing or non-directory ``repo`` is a UserError."""
    if repo is not None:
        repo = Path(repo)
        if not repo.exists():
            raise UserError(f"no such directory: {repo}")
        if not repo.is_dir():
            raise UserError(f"not a directory: {repo}")
        root = repo.resolve()
    else:
        root = find_repo(Path.cwd())
    return load_settings(root, backend=backend, **overrides)


@dataclass(frozen=True)
class Stats:
    """Node and edge counts of the index, by label and type."""

    counts: dict[str, int]

    def as_dict(self) -> dict[str, int]:
        return self.counts


@dataclass(frozen=True)
class CypherResult:
    """The columns and rows a Cypher query returned."""

    columns: list[str]
    rows: list[list[Any]]

    def as_dict(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]


class Index:
    """A session over one repository's index: its settings, its store (open), its embedder (made on
    first use) and its ranking. Made by ``open_index``."""

    def __init__(self, settings: Settings, store: GraphStore, embedder: Embedder | None = None) -> None:
        self.settings = settings
        self.store = store
        self.ranking = Ranking.from_settings(settings)
        if embedder is not None:
            self.embedder = embedder

    @cached_property
    def embedder(self) -> Embedder:
        return embedder_for(self.settings)

    def query(self, text: str) -> Query:
        """The question parsed once; embedded on first use by any method it is passed to."""
        return Query.parse(text)

    def lookup(self, ref: Ref) -> dict[str, Any]:
        """The definition ``ref`` names (id, qualified name, unique short name or path:line); a
        SymbolLookupError (a CgError) when it names none or several. A node from an earlier answer
        is its own definition."""
        return ref if isinstance(ref, dict) else resolve_symbol(self.store, ref)

    def search(self, question: Query | str, limit: int = 10, all_repos: bool = False) -> SearchResult:
        """The best definitions for ``question``; with ``all_repos``, from every repository in the
        database: each one searched on its own, their hits (tagged with the repository) merged by score.
        Scores are normalised within a repository, so the merge interleaves each one's best."""
        query = _asked(Query.of(question)).with_vector(self.embedder)
        if not all_repos:
            return SearchResult(query, search(self.store, self.embedder, query, limit, ranking=self.ranking))
        hits = []
        for key in self.store.repositories():
            for hit in search(self.store.for_repo(key), self.embedder, query, limit, ranking=self.ranking):
                hit.repo = key
                hits.append(hit)
        hits.sort(key=lambda h: (-h.score, h.repo or "", h.id))
        return SearchResult(query, hits[:limit])

    def search_docs(self, question: Query | str, limit: int = 10) -> DocHits:
        return DocHits(by_question(self.store, self.embedder, _asked(Query.of(question)), limit))

    def explain(
        self, question: Query | str, *, seeds: int = 3, depth: int | None = None, budget: int | None = None
    ) -> Explanation:
        """The call flow that answers ``question``; ``depth`` and ``budget`` default to the settings'."""
        return explain(
            self.store,
            self.embedder,
            _asked(Query.of(question)),
            seeds=seeds,
            depth=self.settings.depth if depth is None else depth,
            fanout=self.settings.fanout,
            token_budget=budget or self.settings.token_budget,
            ranking=self.ranking,
        )

    def impact(self, ref: Ref, depth: int = 3, test_depth: int | None = None) -> Impact:
        return impact(self.store, self.lookup(ref), depth=depth, test_depth=test_depth)

    def paths(self, source: Ref, target: Ref, k: int = 3, depth: int = 6) -> Paths:
        a, b = self.lookup(source), self.lookup(target)
        return Paths(a, b, call_paths(self.store, a, b, k=k, max_depth=depth))

    def callers(self, ref: Ref, depth: int = 1, limit: int = 50) -> Neighbours:
        return neighbours(self.store, self.lookup(ref), "in", depth, limit)

    def callees(self, ref: Ref, depth: int = 1, limit: int = 50) -> Neighbours:
        return neighbours(self.store, self.lookup(ref), "out", depth, limit)

    def cypher(self, query: str, params: dict[str, Any] | None = None, write: bool = False) -> CypherResult:
        """A write is a run of its own: readers see the graph before it or after it, never during."""
        with self.store.run(full=False) if write else nullcontext():
            columns, rows = self.store.cypher(query, params or {}, write=write)
        return CypherResult(columns, rows)

    def outdated(self) -> bool:
        """Whether an index run since this session opened replaced what it reads (an embedded session
        keeps the generation it opened; open a new session to read the new one)."""
        return self.store.outdated()

    def stats(self) -> Stats:
        return Stats(self.store.stats())

    def status(self) -> Status:
        """What is indexed, from which commit, and what changed since (what ``index()`` will redo)."""
        from cg.ingest.status import index_status

        return index_status(self.settings, self.store)

    def changes(self, rev: str | None = None, depth: int = 3) -> Changes:
        """The definitions the working tree changes against HEAD (staged or not, new files too), or
        ``rev..HEAD`` with ``rev``; the callers within ``depth`` hops, the flows and the tests they
        reach in the index, ranked. The definitions and their lines come from the diff's own two
        sides (cg/ingest/changes.py), the callers from the index, which says when it is older than
        the files involved (``Changes.stale``)."""
        from cg.ingest.changes import diff_definitions, disk_sha
        from cg.queries.changes import changes

        diff = diff_definitions(self.settings, rev)
        return changes(
            self.store,
            diff.base,
            diff.target,
            diff.files,
            [d.node() for d in diff.definitions],
            {d.id: (d.status, d.lines) for d in diff.definitions},
            depth=depth,
            unparsed=diff.unparsed,
            on_disk=lambda path: disk_sha(self.settings.repo, path),
        )

    def evaluate(self, questions: list[Question] | Path, mode: str = "graph") -> EvalReport:
        """recall@5, recall@10 and MRR over a question file (or loaded questions) with ``mode``."""
        items = load_questions(questions) if isinstance(questions, Path) else questions
        return evaluate(self.store, self.embedder, items, mode, ranking=self.ranking)

    def index(
        self, full: bool = False, since: str | None = None, progress: Progress | None = None, embed: str | None = None
    ) -> IndexSummary:
        """Bring the index up to date with the working tree (everything anew with ``full``); needs a
        session opened with ``read_only=False``. Writers of one repository take turns: a second one
        waits up to the ``index_lock_wait`` setting, then fails in one line (a Kùzu writer waits for
        the writers' lock when its store opens, a Neo4j writer here, for the repository's lease)."""
        from cg.ingest.pipeline import index_repository

        with self.store.lease(
            wait=self.settings.index_lock_wait
        ):  # a full run empties the graph inside its own run (store.run)
            return index_repository(
                self.settings, self.store, self.embedder, progress, full=full, since=since, embed_mode=embed
            )


def _asked(query: Query) -> Query:
    """``query``, or a UserError when it holds nothing to look for (every definition would tie)."""
    if not query.text.strip():
        raise UserError("nothing to look for: give words, an identifier or an error string")
    return query


@contextmanager
def open_index(
    repo: Path | str | None = None,
    backend: str | None = None,
    *,
    read_only: bool = True,
    create: bool = False,
    embedder: Embedder | None = None,
    **overrides: Any,
) -> Iterator[Index]:
    """A session over the index of ``repo`` (default: the repository around the current directory).
    Without ``create`` a missing index is an error; ``embedder`` replaces the one the settings name."""
    settings = settings_for(repo, backend, **overrides)
    with open_store(settings, read_only=read_only, must_exist=not create) as store:
        yield Index(settings, store, embedder)


def watch(
    repo: Path | str | None = None,
    backend: str | None = None,
    *,
    stop: threading.Event,
    on_indexed: Callable[[Pass], None] | None = None,
    on_ready: Callable[[], None] | None = None,
    debounce_ms: int = 300,
    embedder: Embedder | None = None,
    **overrides: Any,
) -> None:
    """Keep the index of ``repo`` fresh until ``stop`` is set: an incremental index pass after the
    changes settle (``debounce_ms`` without a new one), one pass at a time (cg/ingest/watch.py).
    Runs in the calling thread; a server runs it in a background thread and reopens its readers in
    ``on_indexed``, called after every pass with what it did (``Pass``: a failed pass carries its one
    line, and is tried again later). The first pass runs at once: it builds the index when there is
    none. Each pass opens the store for writing and closes it when done, so a ``cg index`` run by
    hand between passes takes turns with the watcher; the embedding model is loaded once."""
    from cg.ingest.watch import watch_loop

    settings = settings_for(repo, backend, **overrides)
    settings.checked_index_dir()  # a .cg that is a symbolic link or a file: one line, before watching
    model = embedder or embedder_for(settings)

    def index_once() -> IndexSummary:
        with open_index(settings.repo, backend, read_only=False, create=True, embedder=model, **overrides) as index:
            return index.index(embed="now")  # the watcher computes what `cg index --embed later` left

    watch_loop(settings.repo, settings.index_dir, index_once, stop, on_indexed, debounce_ms, on_ready=on_ready)


def callgraph(
    repo: Path | str | None = None, *, resolver: str | None = None, include_external: bool = True
) -> dict[str, list[str]]:
    """The call graph as {caller: [callees]} by fully-qualified name, straight from the source (no index)."""
    from cg.ingest.callgraph import build_callgraph

    return build_callgraph(settings_for(repo, None, resolver=resolver), include_external=include_external)
