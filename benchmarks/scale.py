"""Big repositories: how soon a real project's graph can be queried, what it costs, and how it answers.

For each project (PyPI sdists: requests 2.32.3, Django 5.1.4) and each configuration, interleaved
over the rounds, on a fresh copy with an empty embedding cache (the ONNX export is copied in, so no
round pays for exporting the model):

1. ``cg index --embed later --json`` in a child process: the graph and its full-text index, no
   vectors. Wall seconds, CPU seconds (user + sys of the child and the jedi workers it waited for,
   from ``os.wait4``), peak RSS of the child, and the index's size on disk: the time to a queryable
   graph.
2. ``cg index`` again, which computes the vectors (time to full vectors is 1 + 2).
3. ``cg index --rebuild`` with the embedding cache the vectors run filled: a whole index whose texts
   are all cached, as a second clone, a rebuild or a new branch's checkout makes it (the vectors are
   written with the graph in one run, then the compacting rewrite). Wall and CPU seconds, peak RSS.
4. a one-line edit of one function body, then ``cg index``: the incremental time, with the stage
   seconds the run reports. With ``--edit-baseline REV``, the edit is timed ``EDIT_PAIRS`` times
   against cg at that git revision (a temporary worktree run by the same Python), interleaved, with
   vectors deferred, each cg on its own copy of the tree indexed by itself (a saved state of another
   format makes a run full): each run adds the line or takes it away again, baseline and current in
   turn, so the ratio holds on a shared machine whose speed drifts.
5. in the last round, answer latency on that index in a warm process (benchmarks/latency.py's
   measurement: explain, impact, path), and the CLI's start-up (``cg --help``).

The machine's load average is recorded at the start and the end; medians are over the rounds.

    python benchmarks/scale.py                                  # requests, 3 rounds, both configs
    python benchmarks/scale.py --projects django --rounds 1 --configs name
    python benchmarks/scale.py --projects django --rounds 1 --configs name --edit-baseline <commit>
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from ingest import fetch_sdist  # noqa: E402
from latency import QUESTIONS, measure  # noqa: E402
from results import machine_line, model_line, write_section  # noqa: E402

from cg.api import quiet_model_loading  # noqa: E402
from cg.config import load_settings  # noqa: E402

PROJECTS = {"requests": ("requests", "2.32.3"), "django": ("Django", "5.1.4")}
CONFIGS = {
    "defaults": {},
    "name": {"CG_RESOLVER": "name", "CG_HISTORY_COMMITS": "0"},
}
CONFIG_LABELS = {"defaults": "cg defaults (jedi)", "name": "`resolver=name`, no history"}
QUESTIONS = {
    **QUESTIONS,
    "Django 5.1.4": [
        "how does a queryset filter become SQL?",
        "how does a request pass through the middleware chain?",
        "how are migrations applied to the database?",
        "how does a template resolve a variable?",
        "how is a model registered with the admin site?",
    ],
}
# one function body each edit changes (a line appended inside it), as a user's small fix would
EDITS = {
    "requests": ("src/requests/utils.py", "def dict_to_sequence(d):\n"),
    "django": ("django/utils/text.py", "def capfirst(x):\n"),
}


def run(command: list[str], cwd: Path, env: dict[str, str]) -> dict:
    """``command`` as a child process: wall and CPU seconds, peak RSS, and its stdout as JSON."""
    started = time.perf_counter()
    # both streams to files: a child that writes more than a pipe holds to one nobody reads until it
    # ends would wait forever (GitNexus's progress on Django did)
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({proc.returncode}): {stderr.strip()[-400:]}")
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss_mb": usage.ru_maxrss / 1024,
        "summary": json.loads(stdout) if stdout.strip().startswith("{") else {},
    }


def disk_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def fresh_cache(work: Path) -> Path:
    """An empty embedding cache holding the user's ONNX export of the model (exporting is not indexing)."""
    cache = work / "cache"
    source = load_settings(ROOT).cache_dir / "onnx"
    if source.is_dir():
        shutil.copytree(source, cache / "onnx")
    return cache


EDIT_LINE = "    # reviewed: behaviour unchanged\n"
EDIT_PAIRS = 3  # baseline and current edits per round with --edit-baseline


def edit(repo: Path, project: str) -> None:
    """Add the edit's line inside the function body, or take it away when it is there."""
    path, header = EDITS[project]
    file = repo / path
    text = file.read_text()
    at = text.index(header) + len(header)
    if text[at:].startswith(EDIT_LINE):
        file.write_text(text[:at] + text[at + len(EDIT_LINE) :])
    else:
        file.write_text(text[:at] + EDIT_LINE + text[at:])


def baseline_tree(rev: str, work: Path) -> Path:
    """cg's source at ``rev``, in a temporary git worktree (removed by ``drop_baseline``)."""
    tree = work / "baseline"
    command = ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), rev]
    subprocess.run(command, check=True, capture_output=True)
    return tree


def drop_baseline(tree: Path) -> None:
    command = ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)]
    subprocess.run(command, check=False, capture_output=True)


def timed_edits(
    source: Path, work: Path, project: str, env: dict[str, str], baseline: Path
) -> tuple[list[dict], list[dict]]:
    """The one-file edit with the baseline's cg and with this one, ``EDIT_PAIRS`` times each, in turn,
    both as ``python -m cg.cli`` from the same interpreter (each its own source first on the path).

    Each cg works on its own copy of the tree, indexed by itself with vectors deferred (``--embed
    later``, as are the edits): a saved state in another format (the baseline's) is rightly taken for
    a stranger's and the run rebuilds the index, so the two cannot share one. One run with no change
    follows each build, untimed, as a tree's next run would: it reads the files copied too recently for
    their stat to be kept (cg/ingest/walk.py, ``stat_key``)."""
    command = [sys.executable, "-m", "cg.cli", "index", "--embed", "later", "--json"]
    sides: dict[str, tuple[Path, dict[str, str]]] = {}
    for which, code in (("baseline", baseline), ("current", ROOT)):
        tree = work / f"repo-{which}"
        shutil.copytree(source, tree, ignore=shutil.ignore_patterns(".cg", "__pycache__"))
        child = {**env, "PYTHONPATH": str(code)}
        for _ in range(2):  # the build, then the run with no change
            run(command, tree, child)
        sides[which] = (tree, child)
    runs: dict[str, list[dict]] = {"baseline": [], "current": []}
    for _ in range(EDIT_PAIRS):
        for which, (tree, child) in sides.items():
            edit(tree, project)
            run_ = run(command, tree, child)
            if run_["summary"].get("mode") != "incremental":
                raise SystemExit(f"the {which} edit run was not incremental: {run_['summary'].get('mode')}")
            runs[which].append(run_)
    return runs["baseline"], runs["current"]


def stage_text(summary: dict) -> str:
    """A run's stages and, after them, what the store's own steps took of its write (the generation's
    copy, compaction and switch: ``GraphWriter.run_steps``), e.g. ``parse 1.4, resolve 0.7, write 1.9
    (copy 0.3, compact 0.4, switch 0.5)``."""
    text = ", ".join(f"{k} {v:.1f}" for k, v in summary.get("seconds", {}).items() if v >= 0.05)
    steps = summary.get("store_steps", {}).get("write", {})
    return text + (f" ({', '.join(f'{k} {v:.1f}' for k, v in steps.items())})" if steps else "")


def _installed_like(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment for the timed cg processes, with Python's bytecode cache allowed as an installed
    cg has it (pip compiles a wheel's modules): a shell that sets ``PYTHONDONTWRITEBYTECODE`` made each
    run compile cg's 64 modules from source again, about 0.3 s of every command and every edit."""
    return {k: v for k, v in environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def one_round(project: str, source: Path, config: str, latency: bool, baseline: Path | None = None) -> dict:
    cg = str(Path(sys.executable).parent / "cg")
    work = Path(tempfile.mkdtemp(prefix="cg-scale-"))
    try:
        repo = work / "repo"
        shutil.copytree(source, repo, ignore=shutil.ignore_patterns(".cg", "__pycache__"))
        env = {**_installed_like(os.environ), **CONFIGS[config], "CG_CACHE_DIR": str(fresh_cache(work))}
        row: dict = {"graph": run([cg, "index", "--embed", "later", "--json"], repo, env)}
        row["index_mb"] = disk_mb(repo / ".cg")
        row["vectors"] = run([cg, "index", "--json"], repo, env)
        row["vectors_mb"] = disk_mb(repo / ".cg")
        edit(repo, project)
        row["edit"] = run([cg, "index", "--json"], repo, env)
        row["warm"] = run([cg, "index", "--rebuild", "--json"], repo, env)
        if baseline is not None:
            row["edit_baseline"], row["edit_current"] = timed_edits(source, work, project, env, baseline)
        if latency:
            os.environ["CG_CACHE_DIR"] = env["CG_CACHE_DIR"]
            for key, value in CONFIGS[config].items():
                os.environ[key] = value
            try:
                row["latency"] = measure(repo, "kuzu", QUESTIONS[label(project)])
            finally:
                for key in ("CG_CACHE_DIR", *CONFIGS[config]):
                    os.environ.pop(key, None)
            starts = [run([cg, "--help"], repo, env)["wall"] for _ in range(3)]
            row["startup"] = statistics.median(starts)
        return row
    finally:
        shutil.rmtree(work, ignore_errors=True)


def label(project: str) -> str:
    name, version = PROJECTS[project]
    return f"{name} {version}"


def med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", default="requests", help="comma-separated: requests, django")
    parser.add_argument("--configs", default="defaults,name", help="comma-separated: defaults, name")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--edit-baseline", metavar="REV", help="also time the edit against cg at this git revision")
    args = parser.parse_args()
    quiet_model_loading()
    projects = args.projects.split(",")
    configs = args.configs.split(",")
    load_start = os.getloadavg()
    rows: dict[tuple[str, str], list[dict]] = {}
    work = Path(tempfile.mkdtemp(prefix="cg-scale-baseline-"))
    baseline = baseline_tree(args.edit_baseline, work) if args.edit_baseline else None
    revision = ""
    if baseline is not None:
        revision = subprocess.run(
            ["git", "-C", str(baseline), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
    try:
        rows = _rounds(args, projects, configs, baseline)
    finally:
        if baseline is not None:
            drop_baseline(baseline)
        shutil.rmtree(work, ignore_errors=True)
    load_end = os.getloadavg()
    _report(args, projects, rows, load_start, load_end, revision)


def _rounds(args: argparse.Namespace, projects: list[str], configs: list[str], baseline: Path | None) -> dict:
    rows: dict[tuple[str, str], list[dict]] = {}
    for round_no in range(args.rounds):
        for project in projects:
            source = fetch_sdist(*PROJECTS[project])
            for config in configs:
                last = round_no == args.rounds - 1
                r = one_round(project, source, config, latency=last, baseline=baseline)
                rows.setdefault((project, config), []).append(r)
                g = r["graph"]
                print(
                    f"{label(project)} {config} round {round_no + 1}: queryable after {g['wall']:.0f} s wall,"
                    f" {g['cpu']:.0f} CPU s, {g['rss_mb']:.0f} MB peak; edit {r['edit']['wall']:.1f} s;"
                    f" warm rebuild {r['warm']['wall']:.0f} s, {r['warm']['rss_mb']:.0f} MB peak",
                    flush=True,
                )
    return rows


def _report(
    args: argparse.Namespace,
    projects: list[str],
    rows: dict,
    load_start: tuple[float, ...],
    load_end: tuple[float, ...],
    revision: str,
) -> None:
    lines = [
        machine_line(),
        "",
        f"`python benchmarks/scale.py --projects {args.projects} --configs {args.configs} --rounds {args.rounds}"
        "`: each project from its PyPI sdist, each configuration on a fresh copy with an empty embedding",
        "cache, interleaved over the rounds; medians. *Queryable* = `cg index --embed later` (the graph and",
        "its full-text index; search, callers, impact, path and explain answer from it): wall and CPU seconds",
        "(user + sys, with the jedi workers), peak RSS, index on disk. *Vectors* = the next `cg index`, which",
        f"computes them ({model_line()}) and writes them (*vectors written*: that write alone).",
        "*Warm rebuild* = `cg index --rebuild` after them, every text's vector in the embedding cache (a",
        "second clone, a rebuild): the graph and its vectors in one run; wall and CPU seconds, peak RSS.",
        "*One-file edit* = one line added inside one function body, then `cg index` (stages as the run",
        "reports them; in brackets, what the store's own steps took of its write: the generation copied,",
        "compacted and switched in, `cg index --json`'s `store_steps`). Latency: the last round's index in a",
        "warm process (benchmarks/latency.py's measurement; explain includes embedding the question).",
        "Start-up: `cg --help`.",
        f"Load average (1, 5, 15 min) at the start {', '.join(f'{x:.1f}' for x in load_start)}, at the end"
        f" {', '.join(f'{x:.1f}' for x in load_end)}, on {os.cpu_count()} cores.",
        "",
        "| project | configuration | rounds | files | definitions | queryable: CPU s | wall s | peak RSS MB "
        "| index MB | stage seconds (parse / jedi / resolve / chunk / write) | vectors: wall s | CPU s | peak RSS MB "
        "| vectors written s | texts embedded | index MB with vectors | warm rebuild: wall s | CPU s | peak RSS MB "
        "| one-file edit wall s | edit stages "
        "| explain p50 ms | impact p50 ms | path p50 ms | start-up s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (project, config), rs in rows.items():
        graph = [r["graph"] for r in rs]
        s = graph[-1]["summary"]
        secs = s.get("seconds", {})
        stages = " / ".join(f"{secs.get(k, 0):.0f}" for k in ("parse", "jedi", "resolve", "embed", "write"))
        vec = [r["vectors"] for r in rs]
        edits = [r["edit"] for r in rs]
        warm = [r["warm"] for r in rs]
        edit_stages = stage_text(edits[-1]["summary"])
        lat = next((r["latency"]["times"] for r in rs if "latency" in r), None)
        cells = [
            label(project),
            CONFIG_LABELS[config],
            str(len(rs)),
            str(s.get("files", "")),
            str(s.get("symbols", "")),
            f"{med([g['cpu'] for g in graph]):.0f}",
            f"{med([g['wall'] for g in graph]):.0f}",
            f"{med([g['rss_mb'] for g in graph]):.0f}",
            f"{med([r['index_mb'] for r in rs]):.0f}",
            stages,
            f"{med([v['wall'] for v in vec]):.0f}",
            f"{med([v['cpu'] for v in vec]):.0f}",
            f"{med([v['rss_mb'] for v in vec]):.0f}",
            f"{med([v['summary'].get('seconds', {}).get('vectors_write', float('nan')) for v in vec]):.1f}",
            str(vec[-1]["summary"].get("embedded", "")),
            f"{med([r['vectors_mb'] for r in rs]):.0f}",
            *(f"{med([w[k] for w in warm]):.0f}" for k in ("wall", "cpu", "rss_mb")),
            f"{med([x['wall'] for x in edits]):.1f}",
            edit_stages,
            *(f"{med(lat[k]) * 1000:.0f}" if lat and lat[k] else "" for k in ("explain", "impact", "path")),
            f"{next((r['startup'] for r in rs if 'startup' in r), float('nan')):.2f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    paired = {key: rs for key, rs in rows.items() if any("edit_current" in r for r in rs)}
    if paired:
        lines += [
            "",
            f"One-file edit against cg at {revision} (`--edit-baseline`), vectors deferred (`--embed later`),"
            " each cg on its own copy of the tree indexed by itself (then one run with no change),"
            f" {EDIT_PAIRS} runs each per round, interleaved (baseline, current, baseline, ...); wall seconds,"
            " medians:",
            "",
            "| project | configuration | baseline s | current s | current / baseline | baseline runs | current runs "
            "| current edit stages (last run) |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for (project, config), rs in paired.items():
            before = [x["wall"] for r in rs for x in r.get("edit_baseline", [])]
            after = [x["wall"] for r in rs for x in r.get("edit_current", [])]
            last = rs[-1]["edit_current"][-1]["summary"]
            cells = [
                label(project),
                CONFIG_LABELS[config],
                f"{med(before):.1f}",
                f"{med(after):.1f}",
                f"{med(after) / med(before):.2f}",
                ", ".join(f"{w:.1f}" for w in before),
                ", ".join(f"{w:.1f}" for w in after),
                stage_text(last),
            ]
            lines.append("| " + " | ".join(cells) + " |")
    title = "Big repositories (benchmarks/scale.py)"
    if "django" in projects:
        title = "Big repositories: Django (benchmarks/scale.py)"
    write_section(title, "\n".join(lines))
    print("results written to benchmarks/RESULTS.md")


if __name__ == "__main__":
    main()
