"""Tool-call latency of ``cg mcp`` as an agent sees it: the real server in a subprocess, called through
the MCP SDK's own client over stdio, on examples/shop and on requests 2.32.3 (the ingest benchmark's
sdist). Goal: p50 <= 100 ms warm for ``search``, ``callers`` and ``impact``.

Each project is copied and indexed once (``cg index`` in a child process, embeddings from the shared
cache). Then one server is started on it and one client session held open: the first call (which opens
the index and loads the model) is timed apart as "first call", one warm-up round follows, then ``ROUNDS``
timed rounds. A round asks every question with ``search``; each question's text carries the round number,
so it is new to the embedding cache and ``search`` includes the model's inference on the question, as for
a question never asked before. ``callers`` and ``impact`` ask about each question's top hit (from the
graph, not typed in here). A time is the client's wall clock around ``call_tool``: JSON-RPC over the pipes,
argument validation, the answer and its JSON both ways. Each call is followed by the same question asked
of ``cg.api`` in this process (its own round suffix, so it is new to the embedding cache too): the
"in process" columns, under the same load, say how much of a call is the protocol and how much the answer.

    python benchmarks/mcp_latency.py      # writes the "MCP tool-call latency" section of benchmarks/RESULTS.md
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from cg.api import Index, open_index

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from ingest import fetch_sdist  # noqa: E402
from latency import QUESTIONS, percentile, scratch_copy  # noqa: E402
from results import cg_command, machine_line, model_line, publish  # noqa: E402

ROUNDS = 10
TOOLS = ("search", "callers", "impact")
GOAL_MS = 100.0


def index(repo: Path) -> str:
    done = subprocess.run([*cg_command(), "index", str(repo)], check=True, capture_output=True, text=True)
    return done.stdout.splitlines()[0]  # "indexed N files, M definitions ..."


def direct(index: Index, tool: str, arguments: dict[str, Any]) -> float:
    """The same question asked of cg.api in this process, as the server's tool asks it, with its JSON."""
    started = time.perf_counter()
    if tool == "search":
        answer = index.search(arguments["query"], arguments["limit"])
    elif tool == "callers":
        answer = index.callers(arguments["symbol"])
    else:
        answer = index.impact(arguments["symbol"])
    json.dumps(answer.as_dict(), default=str)
    return time.perf_counter() - started


async def measure(repo: Path, questions: list[str]) -> dict[str, Any]:
    command, *args = cg_command()
    params = StdioServerParameters(command=command, args=[*args, "mcp", "--repo", str(repo)], env=dict(os.environ))
    times: dict[str, list[float]] = {tool: [] for tool in TOOLS}
    local: dict[str, list[float]] = {tool: [] for tool in TOOLS}
    with open_index(repo) as index:
        index.search(questions[0], 1)  # opens the store and loads the model here too, before any timing
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            return await _rounds(session, index, questions, times, local)


async def _rounds(
    session: ClientSession,
    index: Index,
    questions: list[str],
    times: dict[str, list[float]],
    local: dict[str, list[float]],
) -> dict[str, Any]:
    """The first call, a warm-up round and ROUNDS timed ones; each MCP call, then its question in process."""
    await session.initialize()

    async def call(tool: str, arguments: dict[str, Any]) -> tuple[float, Any]:
        started = time.perf_counter()
        result = await session.call_tool(tool, arguments)
        elapsed = time.perf_counter() - started
        if result.is_error:
            raise RuntimeError(f"{tool} {arguments}: {result.content[0].text}")
        return elapsed, result.structured_content

    first, _ = await call("search", {"query": questions[0], "limit": 10})
    targets = []
    for question in questions:
        _, answer = await call("search", {"query": question, "limit": 1})
        targets.append(answer["hits"][0]["id"])
    for round_no in range(ROUNDS + 1):  # round 0 warms caches and code paths
        for question, target in zip(questions, targets, strict=True):
            for tool, arguments in (
                ("search", {"query": f"{question} ({round_no})", "limit": 10}),
                ("callers", {"symbol": target}),
                ("impact", {"symbol": target}),
            ):
                elapsed, _ = await call(tool, arguments)
                if tool == "search":
                    arguments = {**arguments, "query": f"{question} ({round_no} in process)"}
                here = direct(index, tool, arguments)
                if round_no:
                    times[tool].append(elapsed)
                    local[tool].append(here)
    return {"first": first, "times": times, "local": local, "targets": len(set(targets))}


def main() -> None:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    load = os.getloadavg()
    projects = [("examples/shop", ROOT / "examples" / "shop"), ("requests 2.32.3", fetch_sdist("requests", "2.32.3"))]
    rows = []
    for label, source in projects:
        with scratch_copy(source, "cg-mcp-latency-") as repo:
            indexed = index(repo)
            result = anyio.run(measure, repo, QUESTIONS[label])
        rows.append((label, indexed, result))
        p50 = {tool: statistics.median(result["times"][tool]) * 1000 for tool in TOOLS}
        print(f"{label}: " + ", ".join(f"{tool} p50 {ms:.0f} ms" for tool, ms in p50.items()), flush=True)

    met = all(statistics.median(r["times"][tool]) * 1000 <= GOAL_MS for _, _, r in rows for tool in TOOLS)
    lines = [
        machine_line(),
        "",
        "`cg mcp` in a subprocess, called through the MCP SDK's client (`mcp` 2.x, `ClientSession` over stdio);",
        "the time is the client's wall clock around `call_tool`. One server and one session per project; the",
        f"first call (opening the index, loading the model) is timed apart; then one warm-up round and {ROUNDS}",
        "timed rounds, each asking every question of benchmarks/latency.py with `search` (limit 10; the round",
        "number appended, so the question is new to the embedding cache and is embedded by the model), and",
        "`callers` (depth 1) and `impact` (depth 3) of each question's top hit.",
        f"Model: {model_line()}. Load average (1 min) at the start and the end of the run: {load[0]:.1f} and",
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; a p95 far above the p50 is mostly time spent waiting",
        "for a core.",
        "",
        "| project | index | first call ms | search p50 ms | search p95 ms | search in process p50 ms "
        "| callers p50 ms | callers p95 ms | callers in process p50 ms "
        "| impact p50 ms | impact p95 ms | impact in process p50 ms | samples per tool |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, indexed, r in rows:
        cells = []
        for tool in TOOLS:
            values = r["times"][tool]
            cells += [f"{statistics.median(values) * 1000:.0f}", f"{percentile(values, 0.95) * 1000:.0f}"]
            cells.append(f"{statistics.median(r['local'][tool]) * 1000:.0f}")
        what = indexed.removeprefix("indexed ").split(" (+")[0]
        samples = len(r["times"]["search"])
        lines.append(f"| {label} | {what} | {r['first'] * 1000:.0f} | {' | '.join(cells)} | {samples} |")
    lines += ["", f"Goal p50 <= {GOAL_MS:.0f} ms warm for search, callers and impact: {'met' if met else 'NOT met'}."]
    publish("MCP tool-call latency (benchmarks/mcp_latency.py)", lines)


if __name__ == "__main__":
    main()
