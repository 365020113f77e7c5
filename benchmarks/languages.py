"""Multi-language ingest on real projects: per language, definitions extracted per second and the
share of call sites resolved to a definition in the repository.

Each project is fetched once, at a pinned version, with its own ecosystem's tool, into
benchmarks/data/ (gitignored): ``npm pack`` for TypeScript and JavaScript, ``go mod download`` for
Go, ``mvn dependency:copy`` of a ``sources`` jar for Java, ``cargo metadata`` (which downloads the
crate) for Rust. No embedding here: parse is the tree-sitter pass and extraction (best of three
runs, the CPU is shared), resolve is the generic resolver.

    python benchmarks/languages.py            # writes its section of benchmarks/RESULTS.md
    python benchmarks/languages.py --precise  # the precise pass's section (issue 20), below

``--precise`` measures the TypeScript and JavaScript projects twice in one process, interleaved,
with the precise pass off and on (scip-typescript from tools/npm, which scripts/test
installs, or CG_SCIP_TYPESCRIPT), each project with its dependencies installed beside it as a
developer's checkout has them (``_dependencies``): the share of calls resolved in the repository and to named
externals, the time of the structure pass (parse + resolve) and of a whole ``index_repository`` with
vectors deferred, and how often the generic resolver named the same definition as the compiler where
both named one. Its precision is audited by hand on a fixed sample of 100 ``scip`` edges per
project, chosen by the rank of a hash of the edge, so a change swaps in only the edges it adds:
verdicts live in benchmarks/audit/scip-<project>.tsv, and sampled edges nobody reviewed yet are
written with their source lines to benchmarks/data/audit-pending/scip-<project>.tsv and counted as
pending, never as correct.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
sys.path.insert(0, str(HERE))
from results import machine_line, write_section  # noqa: E402
from scale import fresh_cache  # noqa: E402

from cg.config import load_settings  # noqa: E402
from cg.ingest.pipeline import IndexSummary, extract_repository, resolve_extractions  # noqa: E402
from cg.model import Edge  # noqa: E402


@dataclass(frozen=True)
class Project:
    language: str
    tool: str  # npm | go | maven | cargo
    name: str
    version: str
    subdir: str = ""  # the part of the package that is source in this language (rxjs ships src/ and dist/)

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}"


PROJECTS = [
    Project("typescript", "npm", "rxjs", "7.8.1", "src"),
    Project("javascript", "npm", "express", "4.19.2"),
    Project("go", "go", "github.com/gin-gonic/gin", "v1.10.0"),
    Project("go", "go", "github.com/spf13/cobra", "v1.8.1"),  # stopped every run before issue 15
    Project("java", "maven", "com.google.code.gson:gson", "2.10.1"),
    Project("rust", "cargo", "regex-syntax", "0.8.4"),
    Project("rust", "cargo", "semver", "1.0.23"),  # stopped every run before issue 15
]


# The precise pass's projects: real TypeScript sources (npm packages that ship their src/), CommonJS
# JavaScript (none of these ships a tsconfig.json, so all are indexed as loose files), Go modules
# (their dependencies put in the module cache by `go mod download` first: scip-go never fetches) and
# Java sources jars (sources only, no dependency jars: JavaParser's solver reads them and the JDK).
PRECISE_PROJECTS = [
    Project("typescript", "npm", "rxjs", "7.8.1", "src"),
    Project("typescript", "npm", "@trpc/server", "10.45.2", "src"),
    Project("javascript", "npm", "express", "4.19.2"),
    Project("javascript", "npm", "koa", "2.15.3"),
    Project("go", "go", "github.com/gin-gonic/gin", "v1.10.0"),
    Project("go", "go", "github.com/spf13/cobra", "v1.8.1"),
    Project("java", "maven", "com.google.code.gson:gson", "2.10.1"),
    Project("java", "maven", "org.apache.commons:commons-text", "1.12.0"),
]
AUDIT = HERE / "audit"
AUDIT_SEED = "cg-issue-20"
AUDIT_SIZE = 100
VERDICTS = ("correct", "wrong", "unclear")
ROOT = HERE.parent


def _run(command: list[str], cwd: Path) -> str:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command[:3])} failed: {result.stderr.strip().splitlines()[-1:]}")
    return result.stdout


def fetch(project: Project) -> Path:
    """The project's sources under benchmarks/data/, fetched once with the ecosystem's own tool."""
    target = DATA / f"{project.language}-{project.name.replace('/', '_').replace(':', '_')}-{project.version}"
    if target.is_dir():
        return target / project.subdir if project.subdir else target
    DATA.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if project.tool == "npm":
            _run(["npm", "pack", f"{project.name}@{project.version}", "--silent"], work)
            with tarfile.open(next(work.glob("*.tgz"))) as tar:
                tar.extractall(work / "unpacked", filter="data")
            shutil.copytree(work / "unpacked" / "package", target)
        elif project.tool == "go":
            info = json.loads(_run(["go", "mod", "download", "-json", f"{project.name}@{project.version}"], work))
            shutil.copytree(info["Dir"], target)
            for path in [target, *target.rglob("*")]:  # the module cache is read-only
                path.chmod(0o755 if path.is_dir() else 0o644)
        elif project.tool == "maven":
            artifact = f"{project.name}:{project.version}:jar:sources"
            _run(["mvn", "-q", "dependency:copy", f"-Dartifact={artifact}", f"-DoutputDirectory={work}"], work)
            with zipfile.ZipFile(next(work.glob("*-sources.jar"))) as jar:
                jar.extractall(target)
        elif project.tool == "cargo":
            (work / "src").mkdir()
            (work / "src" / "lib.rs").write_text("")
            (work / "Cargo.toml").write_text(
                f'[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n\n'
                f'[dependencies]\n{project.name} = "={project.version}"\n'
            )
            metadata = json.loads(_run(["cargo", "metadata", "--format-version", "1"], work))
            manifest = next(p["manifest_path"] for p in metadata["packages"] if p["name"] == project.name)
            shutil.copytree(Path(manifest).parent, target)
        else:
            raise ValueError(project.tool)
    return target / project.subdir if project.subdir else target


def measure(project: Project) -> dict:
    repo = fetch(project)
    settings = load_settings(repo, resolver="name")
    best = float("inf")
    for _ in range(3):
        summary = IndexSummary(str(repo), "none")  # the last run's: every file that fell back, named
        started = time.perf_counter()
        extractions, _ = extract_repository(settings, summary=summary)
        best = min(best, time.perf_counter() - started)
    code = [ex for ex in extractions if ex.file.language == project.language]
    definitions = sum(1 for ex in code for s in ex.symbols if s.kind != "module")
    started = time.perf_counter()
    edges, _ = resolve_extractions(settings, extractions, summary=summary)
    resolve_seconds = time.perf_counter() - started
    paths = {ex.file.path for ex in code}
    owner = {s.id: ex.file.path for ex in code for s in ex.symbols}
    calls = [e for e in edges if e.type == "CALLS" and owner.get(e.src) in paths]
    how = Counter("in repo" if e.dst_label == "Symbol" else e.resolved_by for e in calls)
    return {
        "files": len(code),
        "loc": sum(ex.file.loc for ex in code),
        "definitions": definitions,
        "parse": best,
        "resolve": resolve_seconds,
        "call_sites": sum(len(ex.calls) for ex in code),
        "edges": len(calls),
        "in_repo": how["in repo"] / len(calls) if calls else 0.0,
        "external": sum(how[k] for k in ("import", "name")) / len(calls) if calls else 0.0,
        "ambiguous": how["ambiguous"] / len(calls) if calls else 0.0,
        "unresolved": how["unresolved"] / len(calls) if calls else 0.0,
        "unique": sum(1 for e in calls if e.resolved_by == "unique") / len(calls) if calls else 0.0,
        "failed": [str(f) for f in summary.failed],
    }


def _dependencies(project: Project, repo: Path) -> str:
    """Give the type checker the project's dependencies, as a developer's checkout has them, and say
    which: ``go mod download`` for Go; for npm, ``npm install --ignore-scripts`` (no install script
    runs) of the package.json's dependencies and devDependencies, once, beside the package. A
    published npm package has no lockfile, so the versions are the newest its ranges allowed that day;
    without them its imports of fastify, ws, express or Node's types stay unknown to the compiler."""
    if project.tool == "go":
        _run(["go", "mod", "download"], repo)
        return "go mod download"
    if project.tool == "maven":
        return "none: the sources jar and the JDK"
    if project.tool != "npm":
        return ""
    root = repo if (repo / "package.json").is_file() else repo.parent
    if not (root / "node_modules").is_dir():
        # --legacy-peer-deps: an old package's devDependencies can conflict with their peers of today
        _run(
            [
                "npm",
                "install",
                "--ignore-scripts",
                "--legacy-peer-deps",
                "--no-package-lock",
                "--no-audit",
                "--no-fund",
            ],
            root,
        )
    packages = sum(1 for p in (root / "node_modules").glob("*/package.json")) + sum(
        1 for p in (root / "node_modules").glob("@*/*/package.json")
    )
    return f"npm install --ignore-scripts --legacy-peer-deps: {packages} packages"


def _indexers() -> dict[str, str]:
    """The indexers scripts/test installs (or CG_SCIP_TYPESCRIPT / CG_SCIP_GO), by setting."""
    found = {
        "scip_typescript": os.environ.get("CG_SCIP_TYPESCRIPT")
        or str(ROOT / "tools" / "npm" / "node_modules" / ".bin" / "scip-typescript"),
        "scip_go": os.environ.get("CG_SCIP_GO") or str(ROOT / "tools" / "scip-go" / "bin" / "scip-go"),
        "javaparser": os.environ.get("CG_JAVAPARSER") or str(ROOT / "tools" / "javaparser" / "bin" / "cg-javaparser"),
    }
    if not os.environ.get("CG_JAVAPARSER") and not (ROOT / "tools" / "javaparser" / "classes").is_dir():
        raise SystemExit("cg-javaparser is not built: run tools/javaparser/build (or set CG_JAVAPARSER)")
    for setting, path in found.items():
        if not Path(path).exists():
            raise SystemExit(f"{setting} not found at {path}: run scripts/test once, or set CG_{setting.upper()}")
    return found


def _shares(calls: list[Edge]) -> dict[str, float]:
    total = len(calls) or 1
    in_repo = sum(1 for e in calls if e.dst_label == "Symbol")
    named = sum(1 for e in calls if e.dst_label != "Symbol" and e.resolved_by not in ("ambiguous", "unresolved"))
    return {
        "in_repo": in_repo / total,
        "named": named / total,
        "resolved": (in_repo + named) / total,
        "ambiguous": sum(1 for e in calls if e.resolved_by == "ambiguous") / total,
        "unresolved": sum(1 for e in calls if e.resolved_by == "unresolved") / total,
    }


def _precise_run(project: Project, repo: Path, mode: str, indexers: dict[str, str]) -> dict:
    """One measurement with the precise pass ``mode`` (off | auto): the structure pass and its edges,
    then a whole index (vectors deferred) into a fresh Kùzu store."""
    from cg.embed import embedder_for
    from cg.graph.kuzu_store import KuzuStore
    from cg.ingest.pipeline import index_repository

    settings = load_settings(repo, resolver="name", precise=mode, history_commits=0, **indexers)
    summary = IndexSummary(str(repo), "none")
    started = time.perf_counter()
    extractions, _ = extract_repository(settings, summary=summary)
    edges, _ = resolve_extractions(settings, extractions, summary=summary)
    structure = time.perf_counter() - started
    code = [ex for ex in extractions if ex.file.language == project.language]
    paths = {ex.file.path for ex in code}
    owner = {s.id: ex.file.path for ex in extractions for s in ex.symbols}
    calls = [e for e in edges if e.type == "CALLS" and owner.get(e.src) in paths]
    edited = sorted(paths)[len(paths) // 2]  # one file of the project, the same in every run
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / repo.name
        shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(".cg", "node_modules"))
        for modules, link in ((repo / "node_modules", copy), (repo.parent / "node_modules", copy.parent)):
            if modules.is_dir():  # the installed dependencies (_dependencies), where the compiler looks
                (link / "node_modules").symlink_to(modules, target_is_directory=True)
                break
        options = {"resolver": "name", "precise": mode, "history_commits": 0, **indexers}
        store = KuzuStore(copy / ".cg" / "graph.kuzu")
        try:
            embedder = embedder_for(settings)
            started = time.perf_counter()
            index_repository(load_settings(copy, **options), store, embedder, full=True, embed_mode="later")
            whole = time.perf_counter() - started
            with (copy / edited).open("a") as f:  # a one-line edit: a comment at the end of the file
                f.write("\n// edited by benchmarks/languages.py\n")
            started = time.perf_counter()
            again = index_repository(load_settings(copy, **options), store, embedder, embed_mode="later")
            edit = time.perf_counter() - started
            assert again.mode == "incremental", again.mode
        finally:
            store.close()
        with_vectors = _index_with_vectors(copy, options)
    return {
        "calls": calls,
        "structure": structure,
        "whole": whole,
        "with_vectors": with_vectors,
        "edit": edit,
        "edit_precise": again.seconds.get("precise", 0.0),
        "precise_seconds": summary.seconds.get("precise", 0.0),
        "precise": summary.precise,
        "loc": sum(ex.file.loc for ex in code),
        "files": len(code),
        "lines": {ex.file.path: ex for ex in code},
    }


def _index_with_vectors(repo: Path, options: dict) -> float:
    """Seconds of what `cg index` does by default on a first run: a whole index into a fresh Kùzu
    store that computes the vectors too, from an embedding cache that holds none (the model's ONNX
    export is copied in: exporting the model is no part of indexing)."""
    from cg.embed import embedder_for
    from cg.graph.kuzu_store import KuzuStore
    from cg.ingest.pipeline import index_repository

    with tempfile.TemporaryDirectory() as scratch:
        settings = load_settings(repo, cache_dir=fresh_cache(Path(scratch)), **options)
        shutil.rmtree(repo / ".cg", ignore_errors=True)
        store = KuzuStore(repo / ".cg" / "graph.kuzu")
        try:
            embedder = embedder_for(settings)
            started = time.perf_counter()
            index_repository(settings, store, embedder, full=True, embed_mode="now")
            return time.perf_counter() - started
        finally:
            store.close()


def _agreement(off: list[Edge], on: list[Edge]) -> tuple[int, int]:
    """Sites (caller, line) where the generic resolver and the compiler both named definitions in the
    repository, and how many of them they named the same set of definitions."""
    generic: dict[tuple[str, int], set[str]] = {}
    compiler: dict[tuple[str, int], set[str]] = {}
    for e in off:
        if e.dst_label == "Symbol":
            generic.setdefault((e.src, e.line), set()).add(e.dst)
    for e in on:
        if e.dst_label == "Symbol" and e.resolved_by == "scip":
            compiler.setdefault((e.src, e.line), set()).add(e.dst)
    both = set(generic) & set(compiler)
    return sum(1 for site in both if generic[site] == compiler[site]), len(both)


def _audit_rank(edge: Edge) -> str:
    return hashlib.sha256(f"{AUDIT_SEED}\0{edge.src}\0{edge.dst}\0{edge.line}".encode()).hexdigest()


def _slug(project: Project) -> str:
    return "scip-" + project.name.replace("@", "").replace("/", "-").replace(":", "-")


def audit(project: Project, repo: Path, calls: list[Edge]) -> dict:
    """Precision of the ``scip`` edges over the reviewed part of the fixed sample; the rest is pending."""
    scip = sorted({(e.src, e.dst, e.line): e for e in calls if e.resolved_by == "scip"}.values(), key=_audit_rank)
    sample = scip[:AUDIT_SIZE]
    verdicts: dict[tuple[str, str, str], tuple[str, str]] = {}
    path = AUDIT / f"{_slug(project)}.tsv"
    if path.exists():
        with path.open(newline="") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                if row["verdict"] not in VERDICTS:
                    raise SystemExit(
                        f"{path}: unknown verdict {row['verdict']!r} for {row['caller']} -> {row['callee']}"
                    )
                verdicts[(row["caller"], row["callee"], row["line"])] = (row["verdict"], row["reason"])
    counts = dict.fromkeys(VERDICTS, 0)
    pending: list[Edge] = []
    wrong_edges: list[str] = []
    for e in sample:
        verdict = verdicts.get((e.src, e.dst, str(e.line)))
        if verdict is None:
            pending.append(e)
            continue
        counts[verdict[0]] += 1
        if verdict[0] == "wrong":
            wrong_edges.append(f"{e.src} -> {e.dst} (line {e.line}): {verdict[1]}")
    pending_file = DATA / "audit-pending" / f"{_slug(project)}.tsv"
    pending_file.parent.mkdir(parents=True, exist_ok=True)
    with pending_file.open("w") as f:
        f.write("caller\tcallee\tline\tverdict\treason\tsource\n")
        for e in pending:
            source = repo / e.src.split("::", 1)[0]
            lines = source.read_text("utf-8", "replace").splitlines() if source.is_file() else []
            text = lines[e.line - 1].strip() if 0 < e.line <= len(lines) else ""
            f.write(f"{e.src}\t{e.dst}\t{e.line}\t\t\t{text}\n")
    judged = counts["correct"] + counts["wrong"]
    return {
        "sample": len(sample),
        **counts,
        "pending": len(pending),
        "wrong_edges": wrong_edges,
        "precision": counts["correct"] / judged if judged else None,
    }


def precise_main(rounds: int) -> None:
    indexers = _indexers()
    repos = {p.label: fetch(p) for p in PRECISE_PROJECTS}
    installed = {p.label: _dependencies(p, repos[p.label]) for p in PRECISE_PROJECTS}
    results: dict[str, dict[str, list[dict]]] = {p.label: {"off": [], "auto": []} for p in PRECISE_PROJECTS}
    for _ in range(rounds):  # interleaved: each project off then on, round after round
        for project in PRECISE_PROJECTS:
            for mode in ("off", "auto"):
                results[project.label][mode].append(_precise_run(project, repos[project.label], mode, indexers))
                print(project.label, mode, f"{results[project.label][mode][-1]['structure']:.2f}s", flush=True)
    versions = (
        f"scip-typescript {_version(indexers, 'scip_typescript')} on Node {_version(indexers, 'node')}, "
        f"scip-go {_version(indexers, 'scip_go')} on {_version(indexers, 'go')}, "
        f"cg-javaparser on {_version(indexers, 'javaparser')} on Java {_version(indexers, 'java')}"
    )
    lines = [
        machine_line(),
        "",
        "TypeScript, JavaScript (npm), Go (Go modules) and Java (Maven sources jars) projects at pinned",
        f"versions, the precise pass off and on in one process, interleaved, {rounds} rounds, medians; {versions}.",
        "Shares are of the call",
        "edges from the project's files: in repo = to a definition in the project, named = a builtin or",
        "library named (the TypeScript library's `Array.map`, Go's `net/http.Header.Get`, an import),",
        "resolved = both. Structure = walk, parse, extract and resolve (with the indexer when on);",
        "index = a whole `index_repository` into a fresh Kùzu store with vectors deferred (what `cg index",
        "--embed later` does); with vectors = the same with the vectors computed, from an embedding cache",
        "that holds none (what a first `cg index` does by default); edit = the incremental run after a",
        "one-line edit of one file (its precise pass",
        "re-indexes the project or module that holds it, whole). Agreement = of the call sites where the",
        "generic resolver and the compiler both named definitions in the project, those where they named the",
        "same ones (the generic resolver read against the compiler). Precision = correct / (correct +",
        f"wrong) over the reviewed part of a fixed sample of {AUDIT_SIZE} `scip` edges per project",
        "(benchmarks/audit/scip-<project>.tsv). Dependencies = what the type checker was given beside the",
        "sources (`_dependencies`: a developer's checkout has them; the npm versions are those the ranges",
        "allowed on the day, a published package having no lockfile).",
        "",
        "| language | project | files | LOC | dependencies | precise pass | resolved off -> on | in repo off -> on "
        "| named off -> on "
        "| ambiguous + unresolved on | structure s off / on | index s off / on (x) | with vectors s off / on (x) "
        "| edit s off / on (precise s) "
        "| precise s per 1k LOC "
        "| agreement | audit: correct / wrong / unclear / pending | precision |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    wrong: list[str] = []
    for project in PRECISE_PROJECTS:
        off, on = results[project.label]["off"], results[project.label]["auto"]
        mid = lambda runs, key: sorted(r[key] for r in runs)[len(runs) // 2]  # noqa: E731
        a, b = _shares(off[-1]["calls"]), _shares(on[-1]["calls"])
        agree, both = _agreement(off[-1]["calls"], on[-1]["calls"])
        checked = audit(project, repos[project.label], on[-1]["calls"])
        wrong.extend(f"- {project.label}: {w}" for w in checked["wrong_edges"])
        ratio = mid(on, "whole") / mid(off, "whole")
        precision = f"{checked['precision']:.3f}" if checked["precision"] is not None else "-"
        how = "; ".join(f"{k}: {v}" for k, v in sorted(on[-1]["precise"].items()))
        lines.append(
            f"| {project.language} | {project.label} | {on[-1]['files']} | {on[-1]['loc']} "
            f"| {installed[project.label]} | {how} "
            f"| {a['resolved']:.1%} -> {b['resolved']:.1%} | {a['in_repo']:.1%} -> {b['in_repo']:.1%} "
            f"| {a['named']:.1%} -> {b['named']:.1%} | {b['ambiguous'] + b['unresolved']:.1%} "
            f"| {mid(off, 'structure'):.2f} / {mid(on, 'structure'):.2f} "
            f"| {mid(off, 'whole'):.2f} / {mid(on, 'whole'):.2f} ({ratio:.2f}x) "
            f"| {mid(off, 'with_vectors'):.1f} / {mid(on, 'with_vectors'):.1f} "
            f"({mid(on, 'with_vectors') / mid(off, 'with_vectors'):.2f}x) "
            f"| {mid(off, 'edit'):.2f} / {mid(on, 'edit'):.2f} ({mid(on, 'edit_precise'):.2f}) "
            f"| {mid(on, 'precise_seconds') / on[-1]['loc'] * 1000:.3f} | {agree} of {both} "
            f"| {checked['correct']} / {checked['wrong']} / {checked['unclear']} / {checked['pending']} | {precision} |"
        )
        print(lines[-1], flush=True)
    lines.extend(["", "Wrong edges in the audit:", *wrong] if wrong else ["", "No audited edge was wrong."])
    write_section("Precise pass (benchmarks/languages.py --precise)", "\n".join(lines))


def _version(indexers: dict[str, str], which: str) -> str:
    if which == "javaparser":  # the solver's jar, as tools/javaparser/build fetched it
        jars = sorted((Path(indexers["javaparser"]).parents[1] / "lib").glob("javaparser-symbol-solver-core-*.jar"))
        return jars[-1].stem.replace("javaparser-symbol-solver-core-", "JavaParser ") if jars else "JavaParser"
    if which == "java":
        out = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=60)
        return (out.stderr or out.stdout).splitlines()[0].split('"')[1] if '"' in (out.stderr or out.stdout) else "?"
    command = {
        "scip_typescript": ["node", indexers["scip_typescript"], "--version"],
        "node": ["node", "--version"],
        "scip_go": [indexers["scip_go"], "--version"],
        "go": ["go", "env", "GOVERSION"],
    }[which]
    out = subprocess.run(command, capture_output=True, text=True, timeout=60)
    return (out.stdout or out.stderr).strip()  # scip-go prints its version on stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--precise", action="store_true", help="the precise pass off and on (TypeScript, JavaScript, Go)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds for --precise (medians)")
    args = parser.parse_args()
    if args.precise:
        precise_main(args.rounds)
        return
    lines = [
        machine_line(),
        "",
        "Per language, real projects at pinned versions. Definitions = symbols other than module chunks;",
        "parse s = walk + tree-sitter + extraction for the whole project (best of 3; the CPU is shared, so",
        "treat the rate as a lower bound); call edges = one per caller/callee pair from that language's files.",
        "In repo = edges to a definition in the project (of which `unique` = by the unique-name rule);",
        "named external = a library, builtin or import target; ambiguous = several candidates, not guessed;",
        "unresolved = a receiver of unknown type or an unknown name. Fell back = files the extractor or the",
        "resolver could not handle (named below the table); cobra and semver ended every run in a",
        "RecursionError before issue 15.",
        "",
        "| language | project | files | LOC | definitions | parse s | definitions/s | resolve s | call edges "
        "| in repo | (unique name) | named external | ambiguous | unresolved | fell back |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    fell_back: list[str] = []
    for project in PROJECTS:
        r = measure(project)
        lines.append(
            f"| {project.language} | {project.label} ({project.tool}) | {r['files']} | {r['loc']} | {r['definitions']} "
            f"| {r['parse']:.2f} | {r['definitions'] / r['parse']:.0f} | {r['resolve']:.2f} | {r['edges']} "
            f"| {r['in_repo']:.1%} | {r['unique']:.1%} | {r['external']:.1%} | {r['ambiguous']:.1%} "
            f"| {r['unresolved']:.1%} | {len(r['failed'])} |"
        )
        fell_back.extend(f"- {project.label}: {failure}" for failure in r["failed"])
        print(lines[-1], flush=True)
    lines.extend(["", *fell_back] if fell_back else ["", "No file fell back in any project."])
    write_section("Multi-language ingest (benchmarks/languages.py)", "\n".join(lines))


if __name__ == "__main__":
    main()
