"""The ``cg`` command line: parses options, calls one ``cg.api`` method, renders its result.

Every command takes ``--json``. Errors a user can cause are one line on stderr and a non-zero exit.
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.pager import Pager

from cg.api import CypherResult, Index, open_index, quiet_model_loading
from cg.errors import CgError, UserError, on_ctrl_c
from cg.queries.query import partial_vectors_note, unembedded

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="cg: a code knowledge graph. Index a repository, then ask how things work.",
)

RepoOpt = Annotated[
    Path | None,
    typer.Option("--repo", help="Repository to act on (default: the one around the current directory)."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
BackendOpt = Annotated[str | None, typer.Option("--backend", help="kuzu (embedded, default) or neo4j.")]
RepoKeyOpt = Annotated[
    str | None,
    typer.Option(
        "--repo-key",
        help="Which repository's graph, in a Neo4j database many share (default: the origin remote's URL,"
        " else the directory name; CG_REPO_KEY).",
    ),
]
CallerDepthOpt = Annotated[int, typer.Option("--depth", min=1, help="Hops of callers to list.")]
LimitOpt = Annotated[int, typer.Option("--limit", "-n", min=1, help="How many results.")]


_OPTIONS: dict[str, bool] = {"no_pager": False}  # global options, set by the app's callback


@app.callback()
def _global_options(
    no_pager: Annotated[
        bool,
        typer.Option(
            "--no-pager", help="Print answers straight to the terminal, not through $CG_PAGER, $PAGER or less."
        ),
    ] = False,
) -> None:
    _OPTIONS["no_pager"] = no_pager
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is (
        signal.default_int_handler
    ):
        signal.signal(signal.SIGINT, on_ctrl_c)  # Ctrl-C is also remembered (cg/errors.py CTRL_C)


class _CommandPager(Pager):
    """A long answer on a terminal goes through a pager, as git's do: ``$CG_PAGER``, else ``$PAGER``, else
    ``less -R``; ``LESS=FRX`` unless the user set ``LESS`` (quit at once when the answer fits one screen,
    keep colours, leave the text on the screen), so a short answer prints as if there were no pager.
    Never when stdout is not a terminal, with ``--json`` or with ``--no-pager``; an empty pager or
    ``cat`` turns it off.

    It is a ``rich.pager.Pager``, handed to rich's ``console.pager()``: rich renders the Markdown of
    ``cg explain`` at the terminal's width with its styles into the pager, which a plain pipe of our
    text could not. rich's own default (``SystemPager``) is not used: it is pydoc's pager, which reads
    neither ``$CG_PAGER`` nor sets ``LESS=FRX``, so a three-line answer would take over the screen."""

    def __init__(self, command: list[str]) -> None:
        self.command = command

    @staticmethod
    def chosen() -> _CommandPager | None:
        """The pager to use for this run, or None to print straight to stdout."""
        if _OPTIONS["no_pager"] or not sys.stdout.isatty() or os.environ.get("TERM") == "dumb":
            return None
        spec = os.environ.get("CG_PAGER", os.environ.get("PAGER", "less -R")).strip()
        try:
            command = shlex.split(spec)
        except ValueError:
            command = []
        return _CommandPager(command) if command and command != ["cat"] else None

    def show(self, content: str) -> None:
        env = {**os.environ, "LESS": os.environ.get("LESS", "FRX"), "LV": os.environ.get("LV", "-c")}
        try:
            proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, env=env)
        except OSError:  # no such pager: the answer still reaches the terminal
            sys.stdout.write(content)
            sys.stdout.flush()
            return
        assert proc.stdin is not None
        interrupt = signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C belongs to the pager (less)
        try:
            proc.stdin.write(content.encode(sys.stdout.encoding or "utf-8", "replace"))
            proc.stdin.close()
        except BrokenPipeError:  # quit before reading it all
            pass
        finally:
            proc.wait()
            signal.signal(signal.SIGINT, interrupt)


def _print_text(text: str) -> None:
    """A text answer, through the pager on a terminal (see ``_CommandPager``)."""
    pager = _CommandPager.chosen()
    if pager is None:
        typer.echo(text)
    else:
        pager.show(text if text.endswith("\n") else text + "\n")


def _fail(message: str, code: int = 1) -> None:
    typer.echo(f"cg: {message}", err=True)
    raise typer.Exit(code)


def _emit(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, default=str))


@contextmanager
def _errors() -> Iterator[None]:
    try:
        yield
    except CgError as exc:
        _fail(str(exc), exc.exit_code)
    except KeyboardInterrupt as exc:
        _fail(str(exc) or "interrupted", 130)
    except (typer.Exit, BrokenPipeError):
        raise
    except Exception as exc:  # a bug of ours: still one line, the traceback only on request
        if os.environ.get("CG_DEBUG"):
            raise
        _fail(f"internal error: {type(exc).__name__}: {exc} (set CG_DEBUG=1 for the traceback)", 70)


class _RichProgress:
    """A progress bar per stage, on a terminal only."""

    def __init__(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._progress = Progress(
            TextColumn("{task.description:>8}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            transient=False,
        )

    def note(self, text: str) -> None:
        self._progress.console.print(text, highlight=False)

    @contextmanager
    def stage(self, name: str, total: int) -> Iterator[Callable[[int], None]]:
        task = self._progress.add_task(name, total=max(total, 1))
        with self._progress:
            yield lambda n: self._progress.advance(task, n)
            self._progress.update(task, completed=max(total, 1))


@app.command()
def index(
    path: Annotated[Path | None, typer.Argument(help="Repository root (default: the one around here).")] = None,
    backend: BackendOpt = None,
    repo_key: RepoKeyOpt = None,
    full: Annotated[
        bool, typer.Option("--full", "--rebuild", help="Drop the index and build it anew (default: only what changed).")
    ] = False,
    since: Annotated[
        str | None, typer.Option("--since", help="Only look at files `git diff REV` names (and untracked ones).")
    ] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Exit non-zero if any file could not be indexed.")] = False,
    embed: Annotated[
        str | None,
        typer.Option(
            "--embed",
            help="now: compute the vectors in this run (the default setting, `embed`); later: store the graph"
            " without the vectors the cache lacks, for the next `cg index` or `cg watch` to compute.",
        ),
    ] = None,
    wait: Annotated[
        float | None,
        typer.Option(
            "--wait",
            min=0,
            help="Seconds to wait for another run writing this repository's index (default: index_lock_wait, 60).",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Bring the index up to date: parse, resolve, chunk, embed and store what changed since the last run."""
    with _errors():
        progress = _RichProgress() if sys.stderr.isatty() and not as_json else None
        waits: dict[str, Any] = {"index_lock_wait": wait} if wait is not None else {}
        with open_index(
            path, backend, read_only=False, create=True, repo_key=repo_key, embed=embed, **waits
        ) as session:
            summary = session.index(full=full, since=since, progress=progress)
        if as_json:
            _emit(summary.as_dict())
        else:
            typer.echo(_summary_text(summary))
        problems = summary.binary + summary.not_utf8 + summary.unreadable + summary.syntax_errors + summary.failed
        if strict and problems:
            _fail(f"--strict: {len(problems)} file(s) were not fully indexed")


def _n(count: int, noun: str, plural: str = "") -> str:
    """``1 commit``, ``2 commits``: a count with its noun agreeing (the nouns here are regular English;
    a pluralising library would be a dependency for one letter)."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def _summary_text(s) -> str:
    edges = ", ".join(f"{v} {k}" for k, v in sorted(s.edges.items()))
    secs = ", ".join(f"{k} {v:.1f}s" for k, v in s.seconds.items())
    if s.mode == "incremental":
        head = (
            f"updated {s.backend}: {s.changed} changed, {s.added} added, {s.removed_files} removed files;"
            f" {_n(s.affected, 'unchanged file')} re-resolved ({secs})"
            if s.changed or s.added or s.removed_files
            else f"up to date: nothing changed since the last run ({secs})"
        )
        index_line = f"index: {_n(s.files, 'file')}, {_n(s.symbols, 'definition')} (+{_n(s.chunks, 'chunk')}), {edges}"
    else:
        head = f"indexed {_n(s.files, 'file')}, {_n(s.symbols, 'definition')} (+{_n(s.chunks, 'chunk')}), {edges}"
        head += f" into {s.backend}"
        head += f" ({secs})"
        index_line = ""
    lines = [
        head,
        f"calls: {s.calls_in_repo} to definitions in the repo, {s.calls_external} to named libraries/builtins, "
        f"{s.calls_unresolved} unresolved"
        + (f" ({s.calls_ambiguous} ambiguous, not guessed)" if s.calls_ambiguous else "")
        + f" ({s.resolved_share:.0%} resolved)",
        f"embeddings: {s.embedded} computed"
        + (f" on {s.embed_device}" if s.embed_device else "")
        + f", {s.embed_cached} from cache",
    ]
    if s.unembedded_files or s.unembedded_commits:
        lines.append(
            f"vectors later: {_n(s.unembedded_files, 'file')} and {_n(s.unembedded_commits, 'commit')} stored without"
            " them; search and explain use the full-text and graph arms there until `cg index` computes them"
        )
    if index_line:
        lines.insert(1, index_line)
    if s.doc_sections or s.commits:
        lines.append(f"docs: {_n(s.doc_sections, 'section')}; history: {_n(s.commits, 'commit')} ({s.commits_new} new)")
    if len(s.languages) > 1:
        lines.insert(1, "languages: " + ", ".join(f"{n} {language}" for language, n in s.languages.items()))
    if s.resolver == "jedi" and s.jedi_sites:
        lines.insert(
            2,
            f"jedi: answered {s.jedi_answered} of {_n(s.jedi_sites, 'site')}"
            + (f" with {_n(s.jedi_workers, 'worker')}" if s.jedi_workers else " in process")
            + (f"; {_n(s.jedi_shared, 'more call')} took the answer of the same name" if s.jedi_shared else "")
            + (f"; over the time budget, fell back to names: {', '.join(s.jedi_timed_out)}" if s.jedi_timed_out else "")
            + (f"; failed: {len(s.jedi_failed)} ({'; '.join(s.jedi_failed[:3])})" if s.jedi_failed else ""),
        )
    if s.precise:
        seconds = s.seconds.get("precise", 0.0)
        lines.insert(
            2,
            "precise pass: "
            + "; ".join(f"{language}: {how}" for language, how in sorted(s.precise.items()))
            + (f" ({seconds:.1f} s)" if seconds else ""),
        )
    for label, items in (
        ("syntax errors (indexed what parsed)", s.syntax_errors),
        ("binary, skipped", s.binary),
        ("not UTF-8, skipped", s.not_utf8),
        ("too large, skipped", s.too_large),
        ("unreadable, skipped", s.unreadable),
        ("could not be analysed, fell back", [str(failure) for failure in s.failed]),
        ("over the per-file caps (max_calls_per_file, max_chunks_per_file)", s.capped),
        ("secret-bearing (keys, credentials), skipped", s.secret_files),
    ):
        if items:
            shown = "; ".join(items[:5]) + (f"; and {len(items) - 5} more" if len(items) > 5 else "")
            lines.append(f"{label}: {len(items)} ({shown})")
    if s.secrets_redacted:
        where = [*s.redacted_files, *(f"commit {c}" for c in s.redacted_commits)]
        shown = "; ".join(where[:5]) + (f"; and {len(where) - 5} more" if len(where) > 5 else "")
        lines.append(f"secrets redacted before storing: {s.secrets_redacted} ({shown})")
    if s.removed_files and s.mode == "full":
        lines.append(f"removed {_n(s.removed_files, 'file that no longer exists', 'files that no longer exist')}")
    return "\n".join(lines)


def _answer(
    repo: Path | None,
    backend: str | None,
    as_json: bool,
    ask: Callable[[Index], Any],
    render: Callable[[Any], str],
    read_only: bool = True,
    repo_key: str | None = None,
    vectors_note: bool = False,
) -> None:
    """Open the index, ask one question of it, print the answer as JSON or text. ``vectors_note``: say
    on stderr when part of the index has no vectors yet (a ranked answer is then partly lexical)."""
    with _errors():
        with open_index(repo, backend, read_only=read_only, repo_key=repo_key) as session:
            result = ask(session)
            missing = unembedded(session.store) if vectors_note else 0
        if missing:
            typer.echo(partial_vectors_note(missing), err=True)
        if as_json:
            _emit(result.as_dict())
        else:
            _print_text(render(result))


@app.command("search")
def search_cmd(
    query: Annotated[str, typer.Argument(help="Words, an identifier, an error string...")],
    limit: LimitOpt = 10,
    docs: Annotated[
        bool, typer.Option("--docs", help="Search doc sections and commit messages instead of definitions.")
    ] = False,
    all_repos: Annotated[
        bool, typer.Option("--all-repos", help="Search every repository in the (Neo4j) database, not just this one.")
    ] = False,
    repo: RepoOpt = None,
    backend: BackendOpt = None,
    repo_key: RepoKeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Hybrid (full-text + vector) search over definitions, or over docs and commits with --docs."""
    from cg.queries.search import render_hits
    from cg.queries.sources import render_doc_hits

    if docs and all_repos:
        _fail("--all-repos searches definitions; --docs searches this repository's docs and commits")
    if docs:
        _answer(
            repo,
            backend,
            as_json,
            lambda index: index.search_docs(query, limit),
            render_doc_hits,
            repo_key=repo_key,
            vectors_note=True,
        )
    else:
        _answer(
            repo,
            backend,
            as_json,
            lambda index: index.search(query, limit, all_repos=all_repos),
            render_hits,
            repo_key=repo_key,
            vectors_note=True,
        )


FORMATS = ("markdown", "json", "mermaid")
FormatOpt = Annotated[str, typer.Option("--format", "-f", help="markdown (default), json or mermaid.")]


def _print_markdown(text: str) -> None:
    """Rich rendering on a terminal (through the pager), the plain Markdown text when piped."""
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.markdown import Markdown

        console, pager = Console(), _CommandPager.chosen()
        if pager is None:
            console.print(Markdown(text))
        else:
            with console.pager(pager, styles=True):
                console.print(Markdown(text))
    else:
        typer.echo(text, nl=False)


@app.command("explain")
def explain_cmd(
    query: Annotated[str, typer.Argument(help='What to explain, e.g. "how is a failed payment retried?".')],
    repo: RepoOpt = None,
    backend: BackendOpt = None,
    repo_key: RepoKeyOpt = None,
    seeds: Annotated[int, typer.Option("--seeds", min=1, help="How many seed definitions.")] = 3,
    depth: Annotated[
        int | None, typer.Option("--depth", min=0, help="Hops of callees (callers get one more, up to the entry).")
    ] = None,
    budget: Annotated[int | None, typer.Option("--budget", min=100, help="Token budget for the answer.")] = None,
    output_format: FormatOpt = "markdown",
    as_json: JsonOpt = False,
) -> None:
    """How does X work: the call flow from its entry points, in order, with citations and code."""
    from cg.queries.explain import render_markdown, render_mermaid

    with _errors():
        if output_format not in FORMATS:
            raise UserError(f"unknown --format {output_format!r} (one of {', '.join(FORMATS)})")
        with open_index(repo, backend, repo_key=repo_key) as session:
            result = session.explain(query, seeds=seeds, depth=depth, budget=budget)
        if as_json or output_format == "json":
            _emit(result.as_dict())
        elif output_format == "mermaid":
            typer.echo(render_mermaid(result), nl=False)
        else:
            _print_markdown(render_markdown(result))


SymbolArg = Annotated[str, typer.Argument(help="Qualified name, unique short name, id, or path:line.")]


@app.command("impact")
def impact_cmd(
    symbol: SymbolArg,
    depth: CallerDepthOpt = 3,
    repo: RepoOpt = None,
    backend: BackendOpt = None,
    repo_key: RepoKeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """What breaks if SYMBOL changes: callers by depth, subclasses and overrides, importers, tests."""
    from cg.queries.impact import render_impact

    _answer(repo, backend, as_json, lambda index: index.impact(symbol, depth=depth), render_impact, repo_key=repo_key)


@app.command("path")
def path_cmd(
    source: Annotated[str, typer.Argument(help="Where the calls start (name, qualified name or path:line).")],
    target: Annotated[str, typer.Argument(help="Where they should arrive.")],
    k: Annotated[int, typer.Option("-k", "--paths", min=1, help="How many paths, shortest first.")] = 3,
    depth: Annotated[int, typer.Option("--depth", min=1, help="Longest path, in calls.")] = 6,
    repo: RepoOpt = None,
    backend: BackendOpt = None,
    repo_key: RepoKeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The shortest call paths from SOURCE to TARGET, each hop cited."""
    from cg.queries.paths import render_paths

    _answer(
        repo,
        backend,
        as_json,
        lambda index: index.paths(source, target, k=k, depth=depth),
        render_paths,
        repo_key=repo_key,
    )


@app.command()
def callers(
    symbol: SymbolArg,
    depth: Annotated[int, typer.Option("--depth", min=1, help="Callers of callers, this many hops.")] = 1,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="At most this many per definition.")] = 50,
    repo: RepoOpt = None,
    backend: BackendOpt = None,
    repo_key: RepoKeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Who calls SYMBOL (and who calls them, with --depth)."""
    from cg.queries.neighbours import render_neighbours

    _answer(
        repo, backend, as_json, lambda index: index.callers(symbol, depth, limit), render_neighbours, repo_key=repo_key
    )


@app.command()
def callees(
    symbol: SymbolArg,
    depth: Annotated[int, typer.Option("--depth", min=1, help="Callees of callees, this many hops.")] = 1,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="At most this many per definition.")] = 50,
    repo: RepoOpt = None,
    backend: BackendOpt = None,
    repo_key: RepoKeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """What SYMBOL calls (definitions in the repo and external targets; theirs too, with --depth)."""
    from cg.queries.neighbours import render_neighbours

    _answer(
        repo, backend, as_json, lambda index: index.callees(symbol, depth, limit), render_neighbours, repo_key=repo_key
    )


@app.command("changes")
def changes_cmd(
    rev: Annotated[
        str | None,
        typer.Argument(help="Compare REV..HEAD (default: the working tree, staged or not, against HEAD)."),
    ] = None,
    depth: CallerDepthOpt = 3,
    repo: RepoOpt = None,
    backend: BackendOpt = None,
    repo_key: RepoKeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """What a diff touches: the changed definitions, then the callers, flows and tests they reach, ranked."""
    from cg.queries.changes import render_changes

    _answer(repo, backend, as_json, lambda index: index.changes(rev, depth=depth), render_changes, repo_key=repo_key)


@app.command()
def watch(
    repo: RepoOpt = None,
    backend: BackendOpt = None,
    repo_key: RepoKeyOpt = None,
    debounce: Annotated[
        int, typer.Option("--debounce", min=0, help="Milliseconds without a new change before a pass starts.")
    ] = 300,
    as_json: Annotated[bool, typer.Option("--json", help="Also print one JSON object per pass on stdout.")] = False,
) -> None:
    """Keep the index fresh: re-index incrementally whenever files change (Ctrl-C to stop)."""
    import threading

    from cg.api import watch as watch_repository

    stop = threading.Event()

    def on_pass(done) -> None:
        typer.echo(f"cg watch: {done.line()}", err=True)
        if as_json:
            typer.echo(json.dumps(done.as_dict()))

    def on_ready() -> None:
        typer.echo(f"cg watch: watching {target} (debounce {debounce} ms); Ctrl-C to stop", err=True)

    def on_term(signum, frame) -> None:
        stop.set()
        raise KeyboardInterrupt  # ends a running pass too: its generation is discarded, the index stays whole

    target = repo or Path.cwd()
    with _errors():
        previous = signal.signal(signal.SIGTERM, on_term)
        try:
            watch_repository(
                repo, backend, stop=stop, on_indexed=on_pass, on_ready=on_ready, debounce_ms=debounce, repo_key=repo_key
            )
        except KeyboardInterrupt:
            typer.echo("cg watch: stopped", err=True)
        finally:
            signal.signal(signal.SIGTERM, previous)


@app.command()
def cypher(
    query: Annotated[str, typer.Argument(help="A Cypher query.")],
    write: Annotated[bool, typer.Option("--write", help="Allow writes (read-only otherwise).")] = False,
    param: Annotated[list[str] | None, typer.Option("--param", "-p", help="name=value (JSON value or text).")] = None,
    repo: RepoOpt = None,
    backend: BackendOpt = None,
    repo_key: RepoKeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run Cypher against the graph, read-only unless --write."""
    with _errors():
        params: dict[str, Any] = {}
        for item in param or []:
            name, sep, value = item.partition("=")
            if not sep:
                raise UserError(f"--param wants name=value, got {item!r}")
            try:
                params[name] = json.loads(value)
            except json.JSONDecodeError:
                params[name] = value
    _answer(
        repo,
        backend,
        as_json,
        lambda index: index.cypher(query, params, write),
        _cypher_text,
        read_only=not write,
        repo_key=repo_key,
    )


def _cypher_text(result: CypherResult) -> str:
    lines = ["\t".join(result.columns)]
    for row in result.rows:
        lines.append("\t".join(json.dumps(v, default=str) if not isinstance(v, str) else v for v in row))
    return "\n".join(lines)


@app.command("eval")
def eval_cmd(
    questions: Annotated[Path, typer.Argument(help="A question file (YAML): questions with gold definitions.")],
    mode: Annotated[str, typer.Option("--mode", help="lexical, vector, hybrid or graph (+ expansion).")] = "graph",
    repo: RepoOpt = None,
    backend: BackendOpt = None,
    repo_key: RepoKeyOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """recall@5, recall@10 and MRR of the retrieval over a question file, overall and per kind."""
    from cg.queries.evaluate import MODES, load_questions, render_report

    with _errors():
        if mode not in MODES:
            raise UserError(f"unknown --mode {mode!r} (one of {', '.join(MODES)})")
        items = load_questions(questions)
    _answer(repo, backend, as_json, lambda index: index.evaluate(items, mode), render_report, repo_key=repo_key)


@app.command()
def callgraph(
    path: Annotated[Path | None, typer.Argument(help="Repository root (default: the one around here).")] = None,
    output_format: Annotated[str, typer.Option("--format", help="json (PyCG-style adjacency map).")] = "json",
    resolver: Annotated[str | None, typer.Option("--resolver", help="jedi (default) or name.")] = None,
    no_external: Annotated[bool, typer.Option("--no-external", help="Only calls into the repository.")] = False,
) -> None:
    # help text is rich markup: "\\[" prints a literal "[" (tests/cli/test_terminal.py checks every string)
    """The call graph as {caller: \\[callees]} by fully-qualified name, straight from the source (no index)."""
    from cg.api import callgraph as build

    with _errors():
        if output_format != "json":
            raise UserError(f"unknown --format {output_format!r} (json is the one format)")
        _emit(build(path, resolver=resolver, include_external=not no_external))


@app.command()
def stats(
    repo: RepoOpt = None, backend: BackendOpt = None, repo_key: RepoKeyOpt = None, as_json: JsonOpt = False
) -> None:
    """Node and edge counts of the index."""
    _answer(
        repo,
        backend,
        as_json,
        Index.stats,
        lambda s: "\n".join(f"{k:>10} {v}" for k, v in s.counts.items()),
        repo_key=repo_key,
    )


@app.command()
def status(
    repo: RepoOpt = None, backend: BackendOpt = None, repo_key: RepoKeyOpt = None, as_json: JsonOpt = False
) -> None:
    """What is indexed, from which commit, and which files changed since (what `cg index` will redo)."""
    _answer(repo, backend, as_json, Index.status, _status_text, repo_key=repo_key)


def _status_text(st) -> str:
    c = st.counts
    lines = [f"{st.repo} ({st.backend}), indexed {st.indexed_at or 'never'}"]
    if st.indexed_head:
        behind = f", {_n(st.commits_since, 'commit')} behind HEAD {st.head[:10]}" if st.head != st.indexed_head else ""
        lines.append(f"from commit {st.indexed_head[:10]}{behind}")
    lines.append(
        f"{_n(c.get('File', 0), 'file')}, {_n(c.get('Symbol', 0), 'definition')}, {_n(c.get('Doc', 0), 'doc section')},"
        f" {_n(c.get('Commit', 0), 'commit')}, {_n(c.get('CALLS', 0), 'call')}"
    )
    if st.unembedded_files or st.unembedded_commits:
        lines.append(
            f"vectors pending: {_n(st.unembedded_files, 'file')} and {_n(st.unembedded_commits, 'commit')}"
            " (`cg index` computes them)"
        )
    if st.fresh:
        lines.append("up to date with the working tree")
        return "\n".join(lines)
    for label, paths in (("modified", st.modified), ("added", st.added), ("deleted", st.deleted)):
        if paths:
            shown = ", ".join(paths[:10]) + (f" and {len(paths) - 10} more" if len(paths) > 10 else "")
            lines.append(f"stale: {len(paths)} {label}: {shown}")
    lines.append(f"next `cg index`: {st.next_run}")
    return "\n".join(lines)


@app.command("mcp")
def mcp_cmd(
    repo: RepoOpt = None,
    backend: BackendOpt = None,
    repo_key: RepoKeyOpt = None,
    http: Annotated[bool, typer.Option("--http", help="Serve streamable HTTP on 127.0.0.1 instead of stdio.")] = False,
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="The HTTP port (with --http).")] = 8765,
    watch: Annotated[
        bool, typer.Option("--watch", help="Re-index as files change (cg watch), so answers follow edits.")
    ] = False,
) -> None:
    """Serve this repository's index to coding agents over MCP (stdio, or HTTP on 127.0.0.1)."""
    with _errors():
        try:
            from cg.mcp_server import serve
        except ImportError as exc:
            if (exc.name or "").partition(".")[0] not in {"mcp", "mcp_types", "pydantic"}:
                raise
            raise UserError(f"cg mcp needs the mcp extra: pip install 'cg[mcp]' ({exc})") from exc
        serve(repo, backend, repo_key, http=http, port=port, watch=watch)


class _Stderr(logging.Handler):
    """cg's own warnings (a file a stage fell back on) as ``cg: ...`` lines on the stderr of the moment,
    which a progress bar may have redirected."""

    def emit(self, record: logging.LogRecord) -> None:
        typer.echo(f"cg: {self.format(record)}", err=True)


def _log_to_stderr() -> None:
    """Warnings of the ``cg`` loggers on stderr; with CG_DEBUG, their debug lines and tracebacks too."""
    logger = logging.getLogger("cg")
    logger.addHandler(_Stderr())
    logger.setLevel(logging.DEBUG if os.environ.get("CG_DEBUG") else logging.WARNING)
    logger.propagate = False


def main() -> None:
    quiet_model_loading()
    _log_to_stderr()
    try:
        app()
    except BrokenPipeError:  # `cg ... | head`: the reader left; that is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)


if __name__ == "__main__":
    main()
