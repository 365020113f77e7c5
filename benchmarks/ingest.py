"""Ingest benchmark: index examples/shop and real PyPI projects (pinned sdists) on the embedded store.

For each project: files, definitions, edges, call-resolution share, seconds per stage (parse,
resolve, embed, write) and peak memory, for a cold run (empty embedding cache) and a warm re-run
(same content: every embedding comes from the cache). Each run is its own process, so peak RSS is
that run's alone. Baseline in the same run: the standard library's ``ast`` parsing the same files,
to put tree-sitter's parse stage in context.

    python benchmarks/ingest.py            # writes the "Ingest" section of benchmarks/RESULTS.md
"""

from __future__ import annotations

import ast
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"
PROJECTS = [("requests", "2.32.3"), ("click", "8.1.7")]

sys.path.insert(0, str(HERE))
from results import machine_line, model_line, write_section  # noqa: E402


def fetch_sdist(name: str, version: str) -> Path:
    """The project's source tree from its sdist on PyPI, downloaded once into benchmarks/data/."""
    target = DATA / f"{name}-{version}"
    if target.is_dir():
        return target
    DATA.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--no-binary",
                ":all:",
                f"{name}=={version}",
                "-d",
                tmp,
            ],
            check=True,
        )
        archive = next(Path(tmp).glob("*.tar.gz"))
        with tarfile.open(archive) as tar:
            tar.extractall(DATA, filter="data")
    extracted = next(p for p in DATA.iterdir() if p.is_dir() and p.name.lower() == f"{name}-{version}".lower())
    if extracted != target:
        extracted.rename(target)
    return target


def run_index(repo: Path, cache_dir: Path) -> dict:
    """One `cg index --json` in a child process (its summary carries the child's own peak RSS)."""
    env = {**os.environ, "CG_CACHE_DIR": str(cache_dir)}
    cg = Path(sys.executable).parent / "cg"
    started = time.perf_counter()
    out = subprocess.run(
        [str(cg), "index", str(repo), "--json", "--rebuild"], env=env, check=True, capture_output=True, text=True
    )
    wall = time.perf_counter() - started
    data = json.loads(out.stdout)
    data["wall"] = wall
    return data


def ast_baseline(repo: Path) -> tuple[int, float]:
    files = [p for p in repo.rglob("*.py") if ".cg" not in p.parts]
    started = time.perf_counter()
    defs = 0
    for path in files:
        try:
            tree = ast.parse(path.read_bytes())
        except SyntaxError:
            continue
        defs += sum(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for n in ast.walk(tree))
    return defs, time.perf_counter() - started


def main() -> None:
    repos = [("examples/shop", ROOT / "examples" / "shop")]
    for name, version in PROJECTS:
        repos.append((f"{name} {version} (PyPI sdist)", fetch_sdist(name, version)))
    rows = []
    for label, path in repos:
        work = Path(tempfile.mkdtemp(prefix="cg-bench-"))
        try:
            repo = work / "repo"
            shutil.copytree(path, repo, ignore=shutil.ignore_patterns(".cg", "__pycache__"))
            cache = work / "cache"
            cold = run_index(repo, cache)
            warm = run_index(repo, cache)
            defs, ast_seconds = ast_baseline(repo)
            rows.append((label, cold, warm, defs, ast_seconds))
            print(f"{label}: cold {cold['wall']:.1f}s warm {warm['wall']:.1f}s", flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    lines = [
        machine_line(),
        "",
        "Each run is `cg index --rebuild --json` in its own process on the embedded (Kùzu) store; cold = empty",
        "embedding cache, warm = the same content again (all embeddings from the cache). Model: "
        + model_line()
        + ". Peak MB = the indexing process's own peak RSS (the model's runtime included).",
        "",
        "| project | files | definitions | edges | calls resolved | run | parse s | jedi s | resolve s | embed s "
        "| write s | total s | texts/s embedded | peak MB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, cold, warm, _, _ in rows:
        for name, run in (("cold", cold), ("warm", warm)):
            s = run["seconds"]
            rate = run["embedded"] / s["embed"] if run["embedded"] and s["embed"] else 0.0
            lines.append(
                f"| {label} | {run['files']} | {run['symbols']} | {sum(run['edges'].values())} "
                f"| {run['resolved_share']:.0%} | {name} | {s['parse']:.2f} | {s.get('jedi', 0.0):.2f} "
                f"| {s['resolve']:.2f} | {s['embed']:.2f} "
                f"| {s['write']:.2f} | {run['wall']:.1f} | {rate:.1f} | {run['peak_rss_mb']:.0f} |"
            )
    lines += [
        "",
        "Baseline, same run: the standard library's `ast.parse` + `ast.walk` over the same `.py` files",
        "(definitions counted the way `ast` sees them: no module chunks, no nested scopes merged).",
        "",
        "| project | ast definitions | ast parse s | cg parse s (tree-sitter + extraction) |",
        "|---|---|---|---|",
    ]
    for label, cold, _, defs, ast_seconds in rows:
        lines.append(f"| {label} | {defs} | {ast_seconds:.2f} | {cold['seconds']['parse']:.2f} |")
    write_section("Ingest (benchmarks/ingest.py)", "\n".join(lines))
    print(f"python {platform.python_version()}: results written to benchmarks/RESULTS.md")


if __name__ == "__main__":
    main()
