"""The ``cg`` command line: parses options, calls one library function, renders its result.

Every command takes ``--json``. Errors a user can cause are one line on stderr and a non-zero exit.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from cg.config import ConfigError, Settings, find_repo, load_settings
from cg.graph.embed import Embedder, EmbeddingError
from cg.graph.store import StoreError

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
LimitOpt = Annotated[int, typer.Option("--limit", "-n", min=1, help="How many results.")]


class UserError(Exception):
    """A problem the user can fix: printed as one line, exit code 1."""


def _fail(message: str, code: int = 1) -> None:
    typer.echo(f"cg: {message}", err=True)
    raise typer.Exit(code)


def _settings(repo: Path | None, backend: str | None, **overrides: Any) -> Settings:
    if repo is not None:
        if not repo.exists():
            raise UserError(f"no such directory: {repo}")
        if not repo.is_dir():
            raise UserError(f"not a directory: {repo}")
        root = repo.resolve()
    else:
        root = find_repo(Path.cwd())
    return load_settings(root, backend=backend, **overrides)


def _embedder(settings: Settings) -> Embedder:
    return Embedder(
        settings.model,
        settings.cache_dir,
        batch_size=settings.batch_size,
        precision=settings.embed_precision,
        max_tokens=settings.embed_max_tokens,
        backend=settings.embed_backend,
    )


def _ranking(settings: Settings) -> dict[str, Any]:
    """The fusion settings every ranked command passes on: RRF's k, the arms' weights, the priors."""
    return {
        "rrf_k": settings.rrf_k,
        "weights": {"lexical": settings.weight_lexical, "vector": settings.weight_vector, "doc": settings.weight_doc},
        "priors": {
            "tests": settings.prior_tests,
            "modules": settings.prior_modules,
            "containers": settings.prior_containers,
        },
    }


def _emit(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, default=str))


@contextmanager
def _errors() -> Iterator[None]:
    try:
        yield
    except (UserError, ConfigError, StoreError, EmbeddingError) as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        _fail("interrupted", 130)
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

    @contextmanager
    def stage(self, name: str, total: int) -> Iterator[Callable[[int], None]]:
        task = self._progress.add_task(name, total=max(total, 1))
        with self._progress:
            yield lambda n: self._progress.advance(task, n)
            self._progress.update(task, completed=max(total, 1))


def _quiet_model_loading() -> None:
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@app.command()
def index(
    path: Annotated[Path | None, typer.Argument(help="Repository root (default: the one around here).")] = None,
    backend: BackendOpt = None,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Drop the index and build it anew.")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Exit non-zero if any file could not be indexed.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Parse, resolve, chunk, embed and store a repository."""
    from cg.graph.backends import open_store
    from cg.ingest.pipeline import index_repository

    with _errors():
        settings = _settings(path, backend)
        store = open_store(settings)
        try:
            if rebuild:
                store.reset()
            progress = _RichProgress() if sys.stderr.isatty() and not as_json else None
            summary = index_repository(settings, store, _embedder(settings), progress)
        finally:
            store.close()
        if as_json:
            _emit(summary.as_dict())
        else:
            typer.echo(_summary_text(summary))
        problems = summary.binary + summary.not_utf8 + summary.unreadable + summary.syntax_errors
        if strict and problems:
            _fail(f"--strict: {len(problems)} file(s) were not fully indexed")


def _summary_text(s) -> str:
    edges = ", ".join(f"{v} {k}" for k, v in sorted(s.edges.items()))
    secs = ", ".join(f"{k} {v:.1f}s" for k, v in s.seconds.items())
    lines = [
        f"indexed {s.files} files, {s.symbols} definitions (+{s.chunks} chunks), {edges} into {s.backend} ({secs})",
        f"calls: {s.calls_in_repo} to definitions in the repo, {s.calls_external} to named libraries/builtins, "
        f"{s.calls_unresolved} unresolved ({s.resolved_share:.0%} resolved)",
        f"embeddings: {s.embedded} computed, {s.embed_cached} from cache",
    ]
    if s.resolver == "jedi":
        lines.insert(
            2,
            f"jedi: answered {s.jedi_answered} of {s.jedi_sites} sites with {s.jedi_workers} workers"
            + (f"; over the time budget, fell back to names: {', '.join(s.jedi_timed_out)}" if s.jedi_timed_out else "")
            + (f"; failed: {len(s.jedi_failed)} ({'; '.join(s.jedi_failed[:3])})" if s.jedi_failed else ""),
        )
    for label, items in (
        ("syntax errors (indexed what parsed)", s.syntax_errors),
        ("binary, skipped", s.binary),
        ("not UTF-8, skipped", s.not_utf8),
        ("too large, skipped", s.too_large),
        ("unreadable, skipped", s.unreadable),
    ):
        if items:
            shown = "; ".join(items[:5]) + (f"; and {len(items) - 5} more" if len(items) > 5 else "")
            lines.append(f"{label}: {len(items)} ({shown})")
    if s.removed_files:
        lines.append(f"removed {s.removed_files} files that no longer exist")
    return "\n".join(lines)


def _query_context(repo: Path | None, backend: str | None, read_only: bool = True):
    from cg.graph.backends import open_store

    settings = _settings(repo, backend)
    return settings, open_store(settings, read_only=read_only, must_exist=True)


@app.command("search")
def search_cmd(
    query: Annotated[str, typer.Argument(help="Words, an identifier, an error string...")],
    limit: LimitOpt = 10,
    repo: RepoOpt = None,
    backend: BackendOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Hybrid (full-text + vector) search over definitions."""
    from cg.queries.explain import citation
    from cg.queries.search import search

    with _errors():
        settings, store = _query_context(repo, backend)
        try:
            hits = search(
                store,
                _embedder(settings),
                query,
                limit,
                **_ranking(settings),
            )
        finally:
            store.close()
        if as_json:
            _emit([h.as_dict() for h in hits])
            return
        if not hits:
            typer.echo("no matches")
        for n, h in enumerate(hits, 1):
            s = h.symbol
            typer.echo(f"{n:>2}. {h.score:.4f}  {s['qualname']} ({s['kind']}) {citation(s)}")
            if s.get("docstring"):
                typer.echo(f"      {s['docstring'].splitlines()[0]}")


@app.command("explain")
def explain_cmd(
    query: Annotated[str, typer.Argument(help='What to explain, e.g. "payment retry".')],
    repo: RepoOpt = None,
    backend: BackendOpt = None,
    seeds: Annotated[int, typer.Option("--seeds", min=1, help="How many seed definitions.")] = 3,
    depth: Annotated[int | None, typer.Option("--depth", min=0, help="Call-graph hops each way.")] = None,
    budget: Annotated[int | None, typer.Option("--budget", min=100, help="Token budget for code.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """How does X work: seed definitions and their call flow, with citations and code."""
    from cg.queries.explain import explain, render_markdown

    with _errors():
        settings, store = _query_context(repo, backend)
        try:
            result = explain(
                store,
                _embedder(settings),
                query,
                seeds=seeds,
                depth=settings.depth if depth is None else depth,
                fanout=settings.fanout,
                token_budget=budget or settings.token_budget,
                **_ranking(settings),
            )
        finally:
            store.close()
        if as_json:
            _emit(result.as_dict())
        else:
            typer.echo(render_markdown(result))


def _neighbours(
    symbol: str, direction: str, repo: Path | None, backend: str | None, depth: int, limit: int, as_json: bool
) -> None:
    from cg.queries.expand import expand
    from cg.queries.explain import citation

    with _errors():
        _, store = _query_context(repo, backend)
        try:
            matches = store.find_symbols(symbol, limit=20)
            if not matches:
                raise UserError(f"no definition matches {symbol!r} (try a qualified name or `cg search`)")
            results = []
            for match in matches:
                steps = expand(
                    store,
                    [match["id"]],
                    direction,
                    depth=depth,
                    fanout=limit,
                    include_external=direction == "out",
                )
                results.append((match, steps))
        finally:
            store.close()
        if as_json:
            key = "callers" if direction == "in" else "callees"
            _emit(
                [
                    {
                        "symbol": m,
                        key: [
                            {
                                "id": s.id,
                                "qualname": s.node.get("qualname"),
                                "kind": s.node.get("kind"),
                                "path": s.node.get("path"),
                                "start_line": s.node.get("start_line"),
                                "end_line": s.node.get("end_line"),
                                "depth": s.depth,
                                "line": s.line,
                                "resolved_by": s.resolved_by,
                                "label": s.label,
                            }
                            for s in steps
                        ],
                    }
                    for m, steps in results
                ]
            )
            return
        word = "callers" if direction == "in" else "callees"
        for match, steps in results:
            typer.echo(f"{match['qualname']} {citation(match)}: {len(steps)} {word}")
            for s in steps:
                typer.echo(
                    f"  {'  ' * (s.depth - 1)}{s.node.get('qualname') or s.id} {citation(s.node)}"
                    f" line {s.line} ({s.resolved_by})"
                )


@app.command()
def callers(
    symbol: Annotated[str, typer.Argument(help="Name, qualified name or id.")],
    depth: Annotated[int, typer.Option("--depth", min=1)] = 1,
    limit: LimitOpt = 50,
    repo: RepoOpt = None,
    backend: BackendOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Who calls SYMBOL."""
    _neighbours(symbol, "in", repo, backend, depth, limit, as_json)


@app.command()
def callees(
    symbol: Annotated[str, typer.Argument(help="Name, qualified name or id.")],
    depth: Annotated[int, typer.Option("--depth", min=1)] = 1,
    limit: LimitOpt = 50,
    repo: RepoOpt = None,
    backend: BackendOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """What SYMBOL calls (definitions in the repo and external targets)."""
    _neighbours(symbol, "out", repo, backend, depth, limit, as_json)


@app.command()
def cypher(
    query: Annotated[str, typer.Argument(help="A Cypher query.")],
    write: Annotated[bool, typer.Option("--write", help="Allow writes (read-only otherwise).")] = False,
    param: Annotated[list[str] | None, typer.Option("--param", "-p", help="name=value (JSON value or text).")] = None,
    repo: RepoOpt = None,
    backend: BackendOpt = None,
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
        _, store = _query_context(repo, backend, read_only=not write)
        try:
            columns, rows = store.cypher(query, params, write=write)
        finally:
            store.close()
        if as_json:
            _emit([dict(zip(columns, row, strict=True)) for row in rows])
            return
        typer.echo("\t".join(columns))
        for row in rows:
            typer.echo("\t".join(json.dumps(v, default=str) if not isinstance(v, str) else v for v in row))


@app.command("eval")
def eval_cmd(
    questions: Annotated[Path, typer.Argument(help="A question file (YAML): questions with gold definitions.")],
    mode: Annotated[str, typer.Option("--mode", help="lexical, vector, hybrid or graph (+ expansion).")] = "graph",
    repo: RepoOpt = None,
    backend: BackendOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """recall@5, recall@10 and MRR of the retrieval over a question file, overall and per kind."""
    from cg.queries.evaluate import MODES, QuestionFileError, evaluate, load_questions

    with _errors():
        if mode not in MODES:
            raise UserError(f"unknown --mode {mode!r} (one of {', '.join(MODES)})")
        try:
            items = load_questions(questions)
        except QuestionFileError as exc:
            raise UserError(str(exc)) from exc
        settings, store = _query_context(repo, backend)
        try:
            report = evaluate(
                store,
                _embedder(settings),
                items,
                mode,
                **_ranking(settings),
            )
        finally:
            store.close()
        if as_json:
            _emit(report.as_dict())
            return
        data = report.as_dict()
        typer.echo(f"{len(items)} questions, mode {mode}")
        typer.echo(f"{'kind':<10} {'n':>3} {'recall@5':>9} {'recall@10':>10} {'MRR':>6}")
        for kind, row in [*data["by_kind"].items(), ("overall", data["overall"])]:
            typer.echo(
                f"{kind:<10} {row['questions']:>3} {row['recall@5']:>9.3f} {row['recall@10']:>10.3f} {row['mrr']:>6.3f}"
            )
        missed = [q for q in data["questions"] if q["recall@10"] < 1.0]
        if missed:
            typer.echo(f"\nnot fully answered in the first 10 ({len(missed)}):")
            for q in missed:
                typer.echo(f"  {q['id']} ({q['kind']}): gold ranks {q['gold_ranks']}; top: {', '.join(q['top'][:3])}")


@app.command()
def callgraph(
    path: Annotated[Path | None, typer.Argument(help="Repository root (default: the one around here).")] = None,
    output_format: Annotated[str, typer.Option("--format", help="json (PyCG-style adjacency map).")] = "json",
    resolver: Annotated[str | None, typer.Option("--resolver", help="jedi (default) or name.")] = None,
    no_external: Annotated[bool, typer.Option("--no-external", help="Only calls into the repository.")] = False,
) -> None:
    """The call graph as {caller: [callees]} by fully-qualified name, straight from the source (no index)."""
    from cg.ingest.callgraph import build_callgraph

    with _errors():
        if output_format != "json":
            raise UserError(f"unknown --format {output_format!r} (json is the one format)")
        settings = _settings(path, None, resolver=resolver)
        _emit(build_callgraph(settings, include_external=not no_external))


@app.command()
def stats(repo: RepoOpt = None, backend: BackendOpt = None, as_json: JsonOpt = False) -> None:
    """Node and edge counts of the index."""
    with _errors():
        _, store = _query_context(repo, backend)
        try:
            counts = store.stats()
        finally:
            store.close()
        if as_json:
            _emit(counts)
        else:
            for key, value in counts.items():
                typer.echo(f"{key:>10} {value}")


def main() -> None:
    _quiet_model_loading()
    try:
        app()
    except BrokenPipeError:  # `cg ... | head`: the reader left; that is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)


if __name__ == "__main__":
    main()
