"""Which tests does a change break? `cg impact`'s test list scored against the tests that really run
the code, from each project's own suite under a tracer: ground truth nobody here wrote.

For each project of benchmarks/executed_edges.py (flask, sqlparse, more-itertools: pinned PyPI
sdists, none used to tune cg), the suite runs once under benchmarks/tracer.py, which records, per
test, every definition of the package that started while the test's setup, call or teardown ran
(called by the test, a fixture, a test client or the package itself, at any depth). A definition's
*true tests* are the tests that ran it; `cg impact`'s are the test functions its ``tests`` list
holds (its defaults: jedi, fixtures, registries, instances; tests searched up to TEST_DEPTH hops).

Scored over every function and method of the package's ``.py`` files in cg's index, by qualified
name (the tracer's granularity: a property's getter and setter are one definition, listing the
tests either lists):

- pairs: (definition, test) pairs, micro-averaged: precision = listed pairs that ran / listed pairs,
  recall = pairs that ran and are listed / pairs that ran;
- per definition: mean recall over the definitions some test ran; the share of those for which cg
  lists no test at all ("none listed"), and of the definitions no test ran for which cg lists some;
- by the weakest edge on the path cg reached a test by (``Affected.weakest``): how precise each of
  the walk's rules is (jedi, name, fixture, registry, instance, dispatch);
- the definitions most tests run: the central ones, where a user asks "what breaks" first.

Tests are matched by file and name: a pytest node id ``tests/test_x.py::TestA::test_b[param]`` is
the test function ``TestA.test_b`` of ``tests/test_x.py`` (parameters folded). Tests cg has no
function for (made at run time) are left out of both sides, and counted.

    python benchmarks/impact_tests.py [--only flask] [--python python3.12]   # --only prints, writes nothing
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from executed_edges import PROJECTS, Project, executed, in_package, newer_python  # noqa: E402
from ingest import DATA, fetch_sdist  # noqa: E402
from results import machine_line, write_section  # noqa: E402

from cg.api import Index, open_index  # noqa: E402
from cg.model import edge_rank  # noqa: E402
from cg.queries.impact import TEST_DEPTH  # noqa: E402
from cg.queries.lookup import is_test_function  # noqa: E402

Test = tuple[str, str]  # (file, function chain: "test_b" or "TestA.test_b")
CENTRAL = 5  # definitions shown in the table of the most-run ones
# How far up the callers `impact` looks for tests (TEST_DEPTH) is chosen here: each depth is scored,
# and for each project the depth the other projects score best (mean F2) is reported on it. F2
# weighs recall twice precision: a test left off the list is a change that ships untested, a test
# listed in vain costs a run. Ties go to the shallower (cheaper) depth.
DEPTHS = (4, 6, 8, 10)


def test_key(nodeid: str, tree: Path) -> Test | None:
    """``/abs/tree/tests/test_x.py::TestA::test_b[get]`` -> ("tests/test_x.py", "TestA.test_b")."""
    path, _, rest = nodeid.partition("::")
    try:
        relative = Path(path).relative_to(tree.resolve()).as_posix()
    except ValueError:
        return None
    return (relative, rest.split("[", 1)[0].replace("::", ".")) if rest else None


@dataclass
class Scored:
    listed: int = 0
    ran: int = 0
    hits: int = 0
    recalls: list[float] = field(default_factory=list)
    none_listed: int = 0  # definitions some test ran for which cg lists none
    spurious: int = 0  # definitions no test ran for which cg lists some
    unrun: int = 0  # definitions no test ran
    by_rule: Counter = field(default_factory=Counter)  # weakest -> listed
    by_rule_hits: Counter = field(default_factory=Counter)  # weakest -> listed that ran
    central: list[tuple[str, int, int, int]] = field(default_factory=list)  # name, ran, listed, hits
    definitions: int = 0
    unknown_tests: int = 0  # node ids with no test function in cg's index
    seconds: float = 0.0  # impact calls, all definitions

    def f2(self) -> float:
        """F2 of the listed pairs: recall weighs twice precision (see DEPTHS)."""
        precision = self.hits / self.listed if self.listed else 0.0
        recall = self.hits / self.ran if self.ran else 0.0
        return 5 * precision * recall / (4 * precision + recall) if precision + recall else 0.0


def score(project: Project, tree: Path, reached: dict[str, set[str]]) -> dict[int, Scored]:
    """Index a copy of ``tree`` (graph only) and score `impact`'s tests for every package function, with
    the test search at each of DEPTHS."""
    work = DATA / f"impact-{project.name}-{project.version}"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(tree, work, ignore=shutil.ignore_patterns(".cg"))
    try:
        with open_index(work, "kuzu", read_only=False, create=True) as index:
            index.index(full=True, embed="later")
        with open_index(work, "kuzu") as index:
            _, rows = index.store.cypher(
                "MATCH (s:Symbol) WHERE s.kind IN ['function', 'method'] RETURN s.id, s.qualname, s.path", {}
            )
            _, test_rows = index.store.cypher(
                "MATCH (s:Symbol) WHERE s.kind IN ['function', 'method'] "
                "RETURN s.id, s.qualname, s.path, s.name, s.file_kind",
                {},
            )
            functions: dict[Test, str] = {}
            for sid, qualname, path, name, file_kind in test_rows:
                node = {"path": path, "name": name, "file_kind": file_kind}
                if is_test_function(node):
                    parts = qualname.split(".")
                    for n in (1, 2):  # test_b, or TestA.test_b
                        functions[(path, ".".join(parts[-n:]))] = sid
            truth: dict[str, set[str]] = {}  # definition name -> ids of the tests that ran it
            unknown = 0
            for nodeid, names in reached.items():
                key = test_key(nodeid, tree)
                tid = functions.get(key) if key else None
                if tid is None:
                    unknown += 1
                    continue
                for name in names:
                    truth.setdefault(name, set()).add(tid)
            definitions = [  # a stub (.pyi) shares its module's names but is never run
                (sid, qualname)
                for sid, qualname, path in rows
                if in_package(qualname or "", project.package) and (path or "").endswith(".py")
            ]
            # a property's getter and setter (and any redefinition) share the qualified name the tracer
            # records them by: they are scored as one definition, listing the tests either lists
            by_name: dict[str, list[str]] = {}
            for sid, qualname in definitions:
                by_name.setdefault(qualname, []).append(sid)
            return {d: _scored(index, by_name, truth, d, unknown) for d in sorted({*DEPTHS, TEST_DEPTH})}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _scored(
    index: Index, by_name: dict[str, list[str]], truth: dict[str, set[str]], depth: int, unknown: int
) -> Scored:
    """`impact`'s tests of each definition (by qualified name), tests searched up to ``depth`` hops,
    against the tests that ran it."""
    result = Scored(unknown_tests=unknown)
    started = time.perf_counter()
    for qualname, sids in by_name.items():
        listed: dict[str, str] = {}
        for sid in sids:
            for a in index.impact(sid, test_depth=depth).tests:
                best = listed.get(a.node["id"])
                if best is None or edge_rank(a.weakest) < edge_rank(best):
                    listed[a.node["id"]] = a.weakest
        ran = truth.get(qualname, set())
        hits = ran & set(listed)
        result.definitions += 1
        result.listed += len(listed)
        result.ran += len(ran)
        result.hits += len(hits)
        for tid, weakest in listed.items():
            result.by_rule[weakest] += 1
            result.by_rule_hits[weakest] += tid in ran
        if ran:
            result.recalls.append(len(hits) / len(ran))
            result.none_listed += not listed
            result.central.append((qualname, len(ran), len(listed), len(hits)))
        else:
            result.unrun += 1
            result.spurious += bool(listed)
    result.seconds = time.perf_counter() - started
    result.central.sort(key=lambda c: (-c[1], c[0]))
    return result


def ratio(a: int, b: int) -> str:
    return f"{a / b:.3f}" if b else "-"


def chosen_depth(by_depth: list[dict[int, Scored]]) -> int:
    """The depth with the best mean F2 over these projects (the shallower on a tie)."""
    return max(DEPTHS, key=lambda d: (round(statistics.mean(p[d].f2() for p in by_depth), 3), -d))


def depth_table(results: list[tuple[Project, dict, dict[int, Scored]]]) -> list[str]:
    lines = [
        "",
        "Depth of the test search (TEST_DEPTH): pairs precision / recall / F2 per depth, then, for each",
        "project, the depth the other projects pick (best mean F2; recall weighs twice precision: a test",
        "left off the list ships a change untested) and that depth's F2 on it (leave one project out).",
        "",
        "| project | " + " | ".join(f"depth {d}: P / R / F2" for d in DEPTHS) + " | picked by the others | F2 there |",
        "|---|" + "---|" * (len(DEPTHS) + 2),
    ]
    for project, _, by_depth in results:
        cells = [
            f"{ratio(r.hits, r.listed)} / {ratio(r.hits, r.ran)} / {r.f2():.3f}" for r in (by_depth[d] for d in DEPTHS)
        ]
        others = [b for p, _, b in results if p is not project]
        picked = chosen_depth(others) if others else TEST_DEPTH
        lines.append(f"| {project.name} | " + " | ".join(cells) + f" | {picked} | {by_depth[picked].f2():.3f} |")
    everyone = chosen_depth([b for _, _, b in results])
    lines += ["", f"Picked on all projects: depth {everyone}; cg ships TEST_DEPTH = {TEST_DEPTH}."]
    return lines


def report(all_results: list[tuple[Project, dict, dict[int, Scored]]], seconds: float) -> list[str]:
    results = [(p, run, by_depth[TEST_DEPTH]) for p, run, by_depth in all_results]
    lines = [
        machine_line(),
        f"Whole run {seconds:.0f} s.",
        "",
        "Each project's suite runs under benchmarks/tracer.py, which records per test every definition of",
        "the package that started during the test's setup, call or teardown (at any depth, whoever called",
        "it): a definition's true tests. cg: the `tests` of `cg impact` on each function and method of the",
        f"package (defaults; tests searched up to {TEST_DEPTH} hops), on a graph-only Kùzu index of the same tree.",
        "Pairs = (definition, test), micro-averaged; mean recall over the definitions some test ran;",
        "none listed = of those, the share cg lists no test for; spurious = of the definitions no test ran,",
        "the share cg lists some test for (a test that should have run them, or a wrong edge).",
        "",
        "| project | tests (pytest's last line) | definitions | ran by a test | pairs ran | pairs listed "
        "| precision | recall | mean recall | none listed | spurious | impact s (all) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for project, run, r in results:
        ran_defs = len(r.recalls)
        lines.append(
            f"| {project.name} {project.version} | {run['pytest']} | {r.definitions} | {ran_defs} | {r.ran} "
            f"| {r.listed} | {ratio(r.hits, r.listed)} | {ratio(r.hits, r.ran)} "
            f"| {statistics.mean(r.recalls) if r.recalls else 0:.3f} | {ratio(r.none_listed, ran_defs)} "
            f"| {ratio(r.spurious, r.unrun)} | {r.seconds:.1f} |"
        )
    lines += [
        "",
        "Precision of the listed tests by the weakest edge on the path cg reached them by (which rule of",
        "cg/queries/impact.py let them in):",
        "",
        "| project | weakest edge | listed pairs | of them ran | precision |",
        "|---|---|---|---|---|",
    ]
    for project, _, r in results:
        for rule, n in r.by_rule.most_common():
            lines.append(
                f"| {project.name} | {rule} | {n} | {r.by_rule_hits[rule]} | {ratio(r.by_rule_hits[rule], n)} |"
            )
    lines += [
        "",
        f"The {CENTRAL} definitions most tests run, per project:",
        "",
        "| project | definition | tests that ran it | listed by cg | of them ran |",
        "|---|---|---|---|---|",
    ]
    for project, _, r in results:
        for name, ran, listed, hits in r.central[:CENTRAL]:
            lines.append(f"| {project.name} | `{name}` | {ran} | {listed} | {hits} |")
    unknown = ", ".join(f"{p.name} {r.unknown_tests}" for p, _, r in results)
    lines += ["", f"Test node ids with no test function in cg's index (left out): {unknown}."]
    return lines + depth_table(all_results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="one project by name; prints, writes nothing")
    parser.add_argument("--python", help="the interpreter the suites run on (default: as benchmarks/executed_edges.py)")
    args = parser.parse_args()
    python = args.python or newer_python(None) or sys.executable
    started = time.perf_counter()
    results = []
    for project in [p for p in PROJECTS if not args.only or p.name == args.only]:
        tree = fetch_sdist(project.name, project.version)
        _, run = executed(project, tree, python)
        by_depth = score(project, tree, run["reached"])
        results.append((project, run, by_depth))
        scored = by_depth[TEST_DEPTH]
        print(
            f"{project.name}: {len(run['reached'])} tests traced; pairs precision {ratio(scored.hits, scored.listed)}"
            f" recall {ratio(scored.hits, scored.ran)}; {scored.definitions} definitions",
            flush=True,
        )
    lines = report(results, time.perf_counter() - started)
    if args.only:
        print("\n".join(lines))
    else:
        write_section(
            "Tests a change breaks: impact against traced tests (benchmarks/impact_tests.py)", "\n".join(lines)
        )


if __name__ == "__main__":
    main()
