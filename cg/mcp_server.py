"""``cg mcp``: the query front door (cg/api.py) served to coding agents over the Model Context Protocol.

Built on the official SDK's ``MCPServer`` (FastMCP in SDK 1.x) rather than its low-level ``Server``:
it derives each tool's input schema from the typed signature below, validates the arguments an agent
sends against it, and publishes the output schema and structured content, all of which the low-level
server would have us write by hand.

Why one session, kept: a server answers many questions of one repository, so the index is opened
once (``open_index``) and the embedding model loaded once, on the first call that needs them, and
both are kept for the server's life. Calls take turns on one thread of the session's own: the SDK runs
each tool on a worker thread of its pool, while a store connection is not for concurrent use and the
embedding cache's SQLite connection belongs to the thread that opened it. An embedded reader keeps the
generation it opened (cg/graph/generations.py), so before each call the session asks the store
whether a later run (the ``index`` tool, ``cg index`` or ``cg watch`` in another process) switched
it, and reopens on the new one when it did; a Neo4j session reads the live graph. The ``index`` tool
closes the reader first and runs a writer session of its own with the same embedder: a writer takes
the writers' lock (Kùzu) or the repository's lease (Neo4j), so it takes turns with any other writer
and never with the session's reader.

Why errors are tool results: a question an agent got wrong (an unknown symbol, a write or malformed
Cypher, no index yet, an argument out of range) is an answer the agent can act on, so it comes back as
a tool error (``isError``) with the one line ``cg`` would print, and the server keeps serving. A bug
of ours is one line too ("internal error: ..."), its traceback on stderr. Nothing here writes to
stdout: in stdio mode it is the protocol's channel (the SDK points fd 1 at stderr while it serves).

Why read-only: every query tool runs on a read-only session, and ``cypher`` takes no ``write`` flag,
so its text passes the same allow-list as ``cg cypher`` without ``--write`` (cg/graph/readonly.py).
Only ``index`` writes, and only what ``cg index`` would write.

Each tool's structured output is the JSON ``cg <command> --json`` prints for the same question, the
same ``as_dict()`` through the same ``json.dumps(..., default=str)``; an answer that is a list
(search hits, Cypher rows) sits under one key, as MCP's structured content is an object. Adding a
tool is one function in ``build_server`` that calls ``session.answer``.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, InputRequiredResult, ToolAnnotations
from pydantic import Field, ValidationError

from cg.api import Index, open_index, settings_for
from cg.api import watch as watch_repository
from cg.embed import Embedder, embedder_for
from cg.errors import CgError

log = logging.getLogger("cg.mcp")

HOST = "127.0.0.1"  # the HTTP transport listens on loopback only
DEFAULT_PORT = 8765
PATH = "/mcp"

READS = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES_INDEX = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

INSTRUCTIONS = """\
cg answers questions about one repository's code from its knowledge graph (definitions, calls,
imports, inheritance), each definition cited as path:start_line-end_line. Start with `search` (find
definitions by words or identifiers) or `explain` (how does X work: the call flow with code). Before
changing a definition, ask `impact` (what breaks) or `callers`; `callees` and `path` follow calls the
other way. Name a definition by its qualified name, a unique short name, an id from an earlier answer,
or path:line. `status` says whether the index is current; `index` brings it up to date after edits.
`cypher` runs a read-only Cypher query on the graph for anything else."""


class Session:
    """The server's one session over one repository's index: opened on the first call, kept open,
    reopened when a later index run replaced the generation it reads (see the module docstring)."""

    def __init__(self, repo: Path | str | None = None, backend: str | None = None, repo_key: str | None = None):
        self._where: dict[str, Any] = {"repo": repo, "backend": backend, "repo_key": repo_key}
        # the repository is found (and a bad --repo refused) now, before the server starts
        self.settings = settings_for(repo, backend, repo_key=repo_key)
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cg-session")  # calls take turns
        # made on the session's thread, where its cache connection lives; loads its model on first use, once
        self.embedder: Embedder = self._thread.submit(embedder_for, self.settings).result()
        self._stack = ExitStack()
        self._index: Index | None = None

    def answer(self, ask: Callable[[Index], Any], key: str | None = None) -> dict[str, Any]:
        """``ask(index).as_dict()`` as ``cg ... --json`` prints it (under ``key`` when it is a list),
        or a ToolError of one line."""
        return _json(self._serve(lambda: ask(self._reader()).as_dict()), key)

    def reindex(self) -> dict[str, Any]:
        """``cg index`` (incremental) on the repository, as JSON; the reader reopens on the next call."""

        def run() -> Any:
            self._close()
            with open_index(**self._where, read_only=False, create=True, embedder=self.embedder) as writer:
                return writer.index().as_dict()

        return _json(self._serve(run), None)

    def close(self) -> None:
        self._thread.submit(self._close).result()
        self._thread.shutdown()

    def _serve(self, call: Callable[[], Any]) -> Any:
        try:
            return self._thread.submit(call).result()
        except CgError as exc:
            raise ToolError(_line(str(exc))) from exc
        except Exception as exc:  # a bug of ours: one line to the agent, the traceback on stderr
            log.exception("internal error")
            raise ToolError(_line(f"internal error: {type(exc).__name__}: {exc}")) from exc

    def _reader(self) -> Index:
        if self._index is not None and self._index.outdated():
            self._close()
        if self._index is None:
            self._index = self._stack.enter_context(open_index(**self._where, embedder=self.embedder))
        return self._index

    def _close(self) -> None:
        self._index = None
        self._stack.close()


def _line(message: str) -> str:
    """A message on one line (a driver's error may run over several)."""
    return " ".join(message.split())


def _json(data: Any, key: str | None) -> dict[str, Any]:
    """What ``cg ... --json`` prints (cg/cli.py ``_emit``: ``default=str``), as a JSON object."""
    data = json.loads(json.dumps(data, default=str))
    return {key: data} if key is not None else data


def _one_line(error: ValidationError) -> str:
    """pydantic's several-line report of bad arguments as one line: ``limit: Input should be ...``."""
    parts = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        given = f" (got {item['input']!r})" if item["type"] != "missing" and "input" in item else ""
        parts.append(f"{where}: {item['msg']}{given}")
    return "bad arguments: " + "; ".join(parts)


class CgMCPServer(MCPServer[Any]):
    """``MCPServer`` whose argument errors are one line, as every other tool error here."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(f"Error executing tool {name}: {_one_line(exc.__cause__)}") from exc.__cause__
            raise


Symbol = Annotated[
    str,
    Field(
        description="The definition: qualified name (shop.payments.retry.compute_backoff), a unique short name "
        "(compute_backoff), an id from an earlier answer, or path:line (shop/payments/retry.py:12)."
    ),
]
Question = Annotated[str, Field(description="Words, an identifier or an error string, e.g. 'coupon has expired'.")]


def build_server(session: Session) -> CgMCPServer:
    """The server and its tools; each tool is one function over ``session``."""
    server = CgMCPServer(name="cg", instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool(annotations=READS)
    def search(
        query: Question,
        limit: Annotated[int, Field(ge=1, description="How many hits, best first.")] = 10,
        docs: Annotated[
            bool, Field(description="Search doc sections and commit messages instead of definitions.")
        ] = False,
    ) -> dict[str, Any]:
        """Find definitions (functions, classes, methods, config sections) by hybrid full-text + vector
        search: the place to start when you know words or a name but not where the code is. Returns
        `hits`, best first, each with qualname, kind, path, start_line, end_line, signature, docstring and
        score (with docs=true: doc sections and commits, cited the same way). Same as `cg search --json`."""
        if docs:
            return session.answer(lambda index: index.search_docs(query, limit), key="hits")
        return session.answer(lambda index: index.search(query, limit), key="hits")

    @server.tool(annotations=READS)
    def explain(
        query: Annotated[str, Field(description="A how-question, e.g. 'how is a failed payment retried?'.")],
        seeds: Annotated[int, Field(ge=1, description="How many seed definitions the flow starts from.")] = 3,
        depth: Annotated[
            int | None, Field(ge=0, description="Hops of callees from the seeds (default: the repository's setting).")
        ] = None,
        budget: Annotated[
            int | None, Field(ge=100, description="Token budget for the code in the answer (default: the setting).")
        ] = None,
    ) -> dict[str, Any]:
        """How does X work here: the call flow that answers a question, from its entry points through
        the definitions it calls, in order, each with its citation (path, start_line, end_line) and its
        code within the token budget, plus related docs and commits. Use it to understand behaviour
        before reading files. Same as `cg explain --json`."""
        return session.answer(lambda index: index.explain(query, seeds=seeds, depth=depth, budget=budget))

    @server.tool(annotations=READS)
    def impact(
        symbol: Symbol,
        depth: Annotated[int, Field(ge=1, description="Hops of callers to list.")] = 3,
    ) -> dict[str, Any]:
        """What breaks if this definition changes: its callers by depth (with how each call was resolved),
        subclasses and overrides, the files importing it and the tests that reach it, each cited by path
        and lines. Ask it before editing or renaming a definition. Same as `cg impact --json`."""
        return session.answer(lambda index: index.impact(symbol, depth=depth))

    @server.tool(annotations=READS)
    def callers(
        symbol: Symbol,
        depth: Annotated[int, Field(ge=1, description="Callers of callers, this many hops.")] = 1,
        limit: Annotated[int, Field(ge=1, description="At most this many per definition.")] = 50,
    ) -> dict[str, Any]:
        """Who calls this definition (and who calls them, with depth > 1), each call site cited by path
        and line. Same as `cg callers --json`."""
        return session.answer(lambda index: index.callers(symbol, depth, limit))

    @server.tool(annotations=READS)
    def callees(
        symbol: Symbol,
        depth: Annotated[int, Field(ge=1, description="Callees of callees, this many hops.")] = 1,
        limit: Annotated[int, Field(ge=1, description="At most this many per definition.")] = 50,
    ) -> dict[str, Any]:
        """What this definition calls: definitions in the repository (cited) and external targets
        (libraries, builtins); theirs too with depth > 1. Same as `cg callees --json`."""
        return session.answer(lambda index: index.callees(symbol, depth, limit))

    @server.tool(annotations=READS)
    def path(
        source: Annotated[str, Field(description="Where the calls start (same forms as a symbol).")],
        target: Annotated[str, Field(description="Where they should arrive (same forms as a symbol).")],
        k: Annotated[int, Field(ge=1, description="How many paths, shortest first.")] = 3,
        depth: Annotated[int, Field(ge=1, description="Longest path, in calls.")] = 6,
    ) -> dict[str, Any]:
        """The shortest call paths from one definition to another, every hop cited by path and line: how
        does A reach B. Same as `cg path --json`."""
        return session.answer(lambda index: index.paths(source, target, k=k, depth=depth))

    @server.tool(annotations=READS)
    def cypher(
        query: Annotated[
            str,
            Field(
                description="One read-only Cypher statement, e.g. MATCH (f:Symbol)-[:CALLS]->(g:Symbol) "
                "WHERE g.name = $name RETURN f.qualname, f.path, f.start_line"
            ),
        ],
        params: Annotated[dict[str, Any] | None, Field(description="Values for the $parameters in the query.")] = None,
    ) -> dict[str, Any]:
        """Run a read-only Cypher query on the graph (nodes Symbol, File, Chunk, Doc, Commit, External;
        edges CALLS, IMPORTS, INHERITS, DEFINES, DECORATES, ...) for what the other tools do not answer.
        Writes, file access and administration are refused. Returns `rows`, one object per row keyed by
        column, the same as `cg cypher --json`."""
        return session.answer(lambda index: index.cypher(query, params or {}), key="rows")

    @server.tool(annotations=READS)
    def status() -> dict[str, Any]:
        """Whether the index is current: when it was built, from which commit, its counts, and the files
        modified, added or deleted since (what `index` would redo). Same as `cg status --json`."""
        return session.answer(Index.status)

    @server.tool(annotations=READS)
    def changes(
        rev: Annotated[
            str | None,
            Field(description="Compare REV..HEAD (a commit, branch or tag); omitted: the working tree against HEAD."),
        ] = None,
        depth: Annotated[int, Field(ge=1, description="Hops of callers to follow from each changed definition.")] = 3,
    ) -> dict[str, Any]:
        """What a diff touches and reaches, before a commit or a review: the definitions the working tree
        (staged or not, new files too) or REV..HEAD changes, each cited by path and lines from the diff
        itself, then the callers, flows and tests they reach in the index, ranked by distance and edge
        confidence. Says when the index is older than the files involved. Same as `cg changes --json`."""
        return session.answer(lambda index: index.changes(rev, depth))

    @server.tool(annotations=WRITES_INDEX)
    def index() -> dict[str, Any]:
        """Bring the index up to date with the working tree, incrementally: only files changed since the
        last run are parsed, resolved and embedded again. Call it after editing files, before asking
        about them. Returns the run's summary, the same as `cg index --json`."""
        return session.reindex()

    return server


def serve(
    repo: Path | str | None = None,
    backend: str | None = None,
    repo_key: str | None = None,
    http: bool = False,
    port: int = DEFAULT_PORT,
    watch: bool = False,
) -> None:
    """Serve until the client hangs up (stdio) or the process is interrupted (HTTP on 127.0.0.1). With
    ``watch``, a background thread keeps the index fresh as files change (``cg watch``'s loop): each
    pass writes a new version of the index and the session's next call reads it, so the answers
    follow the agent's own edits without an ``index`` call."""
    session = Session(repo, backend, repo_key)
    server = build_server(session)
    stop = threading.Event()
    watcher = None
    if watch:
        watcher = threading.Thread(target=_watch, args=(session, backend, repo_key, stop), name="cg-watch", daemon=True)
        watcher.start()
    try:
        if http:
            print(f"cg: serving MCP on http://{HOST}:{port}{PATH}", file=sys.stderr, flush=True)
            server.run("streamable-http", host=HOST, port=port, streamable_http_path=PATH)
        else:
            if sys.stdin.isatty():  # started by hand: say what it waits for
                print("cg: serving MCP on stdio; an MCP client starts and talks to it (Ctrl-C ends)", file=sys.stderr)
            server.run("stdio")
    finally:
        stop.set()
        if watcher is not None:
            watcher.join(timeout=30)  # a pass under way ends first; the index keeps its last whole version
        session.close()


def _watch(session: Session, backend: str | None, repo_key: str | None, stop: threading.Event) -> None:
    """The watcher thread: passes are reported on stderr (stdout carries the protocol); an error that
    ends the watcher is one line there too, and the server goes on answering from the index it has."""

    def report(done: Any) -> None:
        print(f"cg watch: {done.line()}", file=sys.stderr, flush=True)

    try:
        watch_repository(session.settings.repo, backend, stop=stop, on_indexed=report, repo_key=repo_key)
    except CgError as exc:
        print(f"cg watch: stopped: {_line(str(exc))}", file=sys.stderr, flush=True)
    except Exception:  # a bug of ours must not take the server down with it
        log.exception("cg watch: internal error; the server goes on without watching")
