"""Executed-edge recall: which of the calls a project's own test suite really makes does cg's call
graph hold? Ground truth nobody here wrote: the edges come from running the tests under a tracer.

Projects (pinned PyPI sdists, tests included; none of them was used to tune cg): flask (a web
framework), sqlparse (a parser) and more-itertools (a data/iteration library). For each, a
virtualenv of its own gets pytest and the project's dependencies from the package index, and the
suite runs with the sdist's source tree first on the path, under benchmarks/tracer.py (a pytest
plugin over ``sys.setprofile``). An executed edge is a caller -> callee pair where both are
definitions of the package itself (tests and libraries are left out); names follow `cg callgraph`'s
convention. cg's side is `cg callgraph --no-external` over the same sdist tree, once with the
default resolver (jedi) and once with the name resolver alone (the baseline), in the same run.

Recall = executed edges cg also has / executed edges. The misses are broken down by what the callee
is, to show where the rest lies: a dunder method reached implicitly (``__init__`` from ``X()``,
``__iter__`` from ``for``, ``__enter__`` from ``with``...), a function defined inside another
(decorator wrappers, closures), or an ordinary definition.

    python benchmarks/executed_edges.py [--only flask]   # writes the "Executed-edge recall" section
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from ingest import DATA, fetch_sdist  # noqa: E402
from results import machine_line, write_section  # noqa: E402


@dataclass(frozen=True)
class Project:
    name: str
    version: str
    kind: str
    package: str  # the top-level import name
    source: str  # the directory of the sdist the package is imported from ("" = its root)
    tests: str  # what pytest is given
    requirements: tuple[str, ...] = ("pytest",)  # what its tests need beyond its own dependencies

    def root(self, tree: Path) -> Path:
        return tree / self.source if self.source else tree


PROJECTS = [
    # flask's own pinned test requirements, and the werkzeug of its release (3.1 changed what its tests assert)
    Project(
        "flask", "3.0.3", "web framework", "flask", "src", "tests", ("-r", "requirements/tests.txt", "werkzeug==3.0.3")
    ),
    Project("sqlparse", "0.5.1", "parser", "sqlparse", "", "tests"),
    Project("more-itertools", "10.5.0", "data / iteration library", "more_itertools", "", "tests"),
]


def test_env(project: Project, tree: Path) -> Path:
    """A virtualenv with pytest and the project's own dependencies (made once, under benchmarks/data)."""
    venv = DATA / f"venv-{project.name}-{project.version}"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", *project.requirements, "."], cwd=tree, check=True
        )
    return python


def executed(project: Project, tree: Path) -> tuple[set[tuple[str, str]], dict]:
    """The package-internal edges its test suite executes, and how the run went."""
    python = test_env(project, tree)
    root = project.root(tree)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "edges.json"
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(root), str(HERE)]),
            "CG_TRACE_ROOT": str(root),
            "CG_TRACE_PACKAGE": project.package,
            "CG_TRACE_OUT": str(out),
        }
        started = time.perf_counter()
        run = subprocess.run(
            [str(python), "-m", "pytest", "-q", "-p", "tracer", "-p", "no:cacheprovider", project.tests],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - started
        if not out.exists():
            raise SystemExit(
                f"{project.name}: the traced test run wrote nothing\n{run.stdout[-2000:]}{run.stderr[-2000:]}"
            )
        data = json.loads(out.read_text())
    tail = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""
    return {tuple(e) for e in data["edges"]}, {
        "seconds": seconds,
        "pytest": tail,
        "anonymous": data["anonymous_callees"],
        "nested": set(data["nested"]),
    }


def cg_edges(tree: Path, resolver: str) -> tuple[set[tuple[str, str]], float]:
    cg = Path(sys.executable).parent / "cg"
    started = time.perf_counter()
    out = subprocess.run(
        [str(cg), "callgraph", str(tree), "--no-external", "--resolver", resolver],
        check=True,
        capture_output=True,
        text=True,
    )
    graph = json.loads(out.stdout)
    return {(caller, callee) for caller, callees in graph.items() for callee in callees}, time.perf_counter() - started


def kind_of(callee: str, nested: set[str]) -> str:
    last = callee.rsplit(".", 1)[-1]
    if last.startswith("__") and last.endswith("__"):
        return "dunder (implicit call)"
    if callee in nested:
        return "nested function (closure, wrapper)"
    return "ordinary definition"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="one project by name; prints, writes nothing")
    args = parser.parse_args()
    projects = [p for p in PROJECTS if not args.only or p.name == args.only]

    rows, breakdown = [], []
    for project in projects:
        tree = fetch_sdist(project.name, project.version)
        truth, run = executed(project, tree)
        pkg = project.package + "."
        truth = {(a, b) for a, b in truth if (a + ".").startswith(pkg) and (b + ".").startswith(pkg)}
        found = {}
        for resolver in ("jedi", "name"):
            edges, seconds = cg_edges(tree, resolver)
            found[resolver] = (edges & truth, seconds)
        jedi_hits = found["jedi"][0]
        misses: dict[str, int] = {}
        for _, callee in truth - jedi_hits:
            kind = kind_of(callee, run["nested"])
            misses[kind] = misses.get(kind, 0) + 1
        rows.append((project, run, len(truth), found))
        breakdown.append((project, misses))
        print(
            f"{project.name}: {len(truth)} executed edges; jedi recall {len(jedi_hits) / len(truth):.3f}; "
            f"name recall {len(found['name'][0]) / len(truth):.3f}; {run['pytest']}",
            flush=True,
        )

    lines = [
        machine_line(),
        "",
        "Each project's own test suite runs under a `sys.setprofile` tracer (benchmarks/tracer.py); an executed",
        "edge is a call from one definition of the package to another. Recall = executed edges that",
        "`cg callgraph --no-external` also reports. Same run, same trees: the jedi resolver (cg's default) and",
        "the name resolver alone (baseline).",
        "",
        "| project | kind | tests (pytest's last line) | traced run s | executed edges | jedi recall | jedi s "
        "| name-only recall | name s | calls into lambdas/comprehensions (not scored) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for project, run, total, found in rows:
        jedi, name = found["jedi"], found["name"]
        lines.append(
            f"| {project.name} {project.version} | {project.kind} | {run['pytest']} | {run['seconds']:.0f} | {total} "
            f"| {len(jedi[0]) / total:.3f} | {jedi[1]:.0f} | {len(name[0]) / total:.3f} | {name[1]:.0f} "
            f"| {run['anonymous']} |"
        )
    lines += [
        "",
        "Where the executed edges cg misses (jedi) point:",
        "",
        "| project | callee | missed edges |",
        "|---|---|---|",
    ]
    for project, misses in breakdown:
        for kind, count in sorted(misses.items(), key=lambda kv: -kv[1]):
            lines.append(f"| {project.name} | {kind} | {count} |")
    if args.only:
        print("\n".join(lines))
    else:
        write_section("Executed-edge recall (benchmarks/executed_edges.py)", "\n".join(lines))


if __name__ == "__main__":
    main()
