"""Multi-language ingest on real projects: per language, definitions extracted per second and the
share of call sites resolved to a definition in the repository.

Each project is fetched once, at a pinned version, with its own ecosystem's tool, into
benchmarks/data/ (gitignored): ``npm pack`` for TypeScript and JavaScript, ``go mod download`` for
Go, ``mvn dependency:copy`` of a ``sources`` jar for Java, ``cargo metadata`` (which downloads the
crate) for Rust. No embedding here: parse is the tree-sitter pass and extraction (best of three
runs, the CPU is shared), resolve is the generic resolver.

    python benchmarks/languages.py        # writes its section of benchmarks/RESULTS.md
"""

from __future__ import annotations

import json
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

from cg.config import load_settings  # noqa: E402
from cg.ingest.pipeline import IndexSummary, extract_repository, resolve_extractions  # noqa: E402


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


def main() -> None:
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
