"""cg beside a peer on the same machine, in one run: the time to a queryable graph of a real project.

The peer is GitNexus (npm ``gitnexus``, pinned), ``gitnexus analyze --index-only``: its graph without
embeddings, which it computes only on request, as cg's ``cg index --embed later`` is the graph and
its full-text index without vectors. For each project (PyPI sdists: requests 2.32.3, Django 5.1.4)
and each round, both tools index the same fresh copy (a git repository of the sdist, one commit:
GitNexus reads the tree through git), one after the other, their order alternating between rounds;
each in a child process, with its CPU seconds (user + sys of the child and the children it waited
for, from ``os.wait4``: GitNexus's worker threads and cg's jedi workers alike), wall seconds, peak
RSS of the largest process, and the size of what it wrote (``.cg`` or ``.gitnexus``). GitNexus
runs with ``HOME`` pointed at a scratch folder (it keeps a registry of indexed repositories there)
and offline: its full-text extension is a download it cannot make here, so its figure leaves out
the full-text index cg's includes. The machine's load average is recorded at the start and the end;
medians are over the rounds.

GitNexus is installed by this script with npm into benchmarks/data/tools (no install scripts: its
native parts ship prebuilt), unless ``CG_GITNEXUS`` names its executable.

    python benchmarks/peers.py                                   # requests and Django, 3 rounds
    python benchmarks/peers.py --projects requests --rounds 1
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from ingest import fetch_sdist  # noqa: E402
from results import machine_line, write_section  # noqa: E402
from scale import CONFIG_LABELS, CONFIGS, PROJECTS, disk_mb, fresh_cache, label, run  # noqa: E402

GITNEXUS = "gitnexus@1.6.12"
TOOLS = HERE / "data" / "tools"


def gitnexus() -> Path:
    """The GitNexus executable: ``CG_GITNEXUS``, or installed by npm into benchmarks/data/tools."""
    if os.environ.get("CG_GITNEXUS"):
        return Path(os.environ["CG_GITNEXUS"])
    folder = TOOLS / "gitnexus"
    binary = folder / "node_modules" / ".bin" / "gitnexus"
    if not binary.exists():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--prefix", str(folder), GITNEXUS],
            check=True,
            capture_output=True,
        )
    return binary


def version(binary: Path) -> str:
    return subprocess.run([str(binary), "--version"], capture_output=True, text=True, check=True).stdout.strip()


def fresh_repo(source: Path, work: Path) -> Path:
    """A copy of ``source`` as a git repository with one commit."""
    repo = work / "repo"
    shutil.copytree(source, repo, ignore=shutil.ignore_patterns(".cg", ".gitnexus", "__pycache__"))
    git = ["git", "-c", "user.email=bench@example.invalid", "-c", "user.name=bench"]
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "sdist"], cwd=repo, check=True)
    return repo


def run_cg(source: Path, config: str) -> dict:
    work = Path(tempfile.mkdtemp(prefix="cg-peers-"))
    try:
        repo = fresh_repo(source, work)
        cg = str(Path(sys.executable).parent / "cg")
        env = {**os.environ, **CONFIGS[config], "CG_CACHE_DIR": str(fresh_cache(work))}
        result = run([cg, "index", "--embed", "later", "--json"], repo, env)
        result["disk_mb"] = disk_mb(repo / ".cg")
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_gitnexus(source: Path, binary: Path) -> dict:
    work = Path(tempfile.mkdtemp(prefix="gitnexus-peers-"))
    try:
        repo = fresh_repo(source, work)
        home = work / "home"
        home.mkdir()
        env = {**os.environ, "HOME": str(home), "GITNEXUS_HOME": str(home / ".gitnexus")}
        result = run([str(binary), "analyze", "--index-only", "."], repo, env)
        result["disk_mb"] = disk_mb(repo / ".gitnexus")
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


def med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", default="requests,django", help="comma-separated: requests, django")
    parser.add_argument("--configs", default="name", help="cg's configurations, comma-separated: defaults, name")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    binary = gitnexus()
    peer = f"GitNexus {version(binary)}"
    projects, configs = args.projects.split(","), args.configs.split(",")
    load_start = os.getloadavg()
    rows: dict[tuple[str, str], list[dict]] = {}
    for round_no in range(args.rounds):
        for project in projects:
            source = fetch_sdist(*PROJECTS[project])
            tools: list[tuple[str, object]] = [(config, config) for config in configs] + [("gitnexus", None)]
            for tool, config in tools if round_no % 2 == 0 else tools[::-1]:
                result = run_cg(source, str(config)) if config else run_gitnexus(source, binary)
                rows.setdefault((project, tool), []).append(result)
                print(
                    f"{label(project)} {tool} round {round_no + 1}: {result['wall']:.0f} s wall,"
                    f" {result['cpu']:.0f} CPU s, {result['rss_mb']:.0f} MB peak",
                    flush=True,
                )
    load_end = os.getloadavg()
    lines = [
        machine_line(),
        "",
        f"`python benchmarks/peers.py --projects {args.projects} --configs {args.configs} --rounds {args.rounds}`"
        f": cg (`cg index --embed later`: the graph and its full-text index, no vectors) beside {peer}",
        "(`gitnexus analyze --index-only`: its graph, no embeddings; offline, so without the full-text index",
        "it would download), on the same fresh git copy of each project's PyPI sdist, one after the other,",
        "their order alternating between rounds; medians. CPU s = user + sys of the process and the children it",
        "waited for. Ratio = cg's CPU seconds over the peer's, measured in the same run.",
        f"Load average (1, 5, 15 min) at the start {', '.join(f'{x:.1f}' for x in load_start)}, at the end"
        f" {', '.join(f'{x:.1f}' for x in load_end)}, on {os.cpu_count()} cores.",
        "",
        "| project | tool | rounds | CPU s | wall s | peak RSS MB | on disk MB | CPU s / peer's |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for project in projects:
        peer_cpu = med([r["cpu"] for r in rows[(project, "gitnexus")]])
        for tool in [*configs, "gitnexus"]:
            rs = rows[(project, tool)]
            cpu = med([r["cpu"] for r in rs])
            name = f"cg, {CONFIG_LABELS[tool]}" if tool != "gitnexus" else peer
            cells = [
                label(project),
                name,
                str(len(rs)),
                f"{cpu:.0f}",
                f"{med([r['wall'] for r in rs]):.0f}",
                f"{med([r['rss_mb'] for r in rs]):.0f}",
                f"{med([r['disk_mb'] for r in rs]):.0f}",
                f"{cpu / peer_cpu:.2f}" if tool != "gitnexus" else "1",
            ]
            lines.append("| " + " | ".join(cells) + " |")
    write_section("Beside a peer: time to a queryable graph (benchmarks/peers.py)", "\n".join(lines))
    print("results written to benchmarks/RESULTS.md")


if __name__ == "__main__":
    main()
