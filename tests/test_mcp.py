"""`cg mcp` as an agent meets it: the real server in a subprocess, driven by the MCP SDK's own client over
stdio (and once over streamable HTTP). Every tool's structured result is checked against what `cg ... --json`
prints for the same question; errors an agent can cause are one-line tool errors and the server keeps serving.

One server per module: a blocking portal (anyio) runs the client's event loop in a thread, so the
module-scoped fixture holds one initialized ClientSession across the synchronous tests.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="cg mcp needs the mcp extra")

from anyio.from_thread import BlockingPortal, start_blocking_portal  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from tests.conftest import cg_command, copy_shop  # noqa: E402
from tests.shop_history import CAPPED, commit_history  # noqa: E402

TOOLS = {"search", "explain", "impact", "callers", "callees", "path", "cypher", "status", "changes", "index"}


def _cg() -> list[str]:
    cg = Path(sys.executable).parent / "cg"
    return [str(cg)] if cg.exists() else [sys.executable, "-m", "cg.cli"]


@asynccontextmanager
async def _stdio_session(repo: Path, errlog: Any, *extra: str) -> AsyncIterator[ClientSession]:
    command, *args = _cg()
    params = StdioServerParameters(
        command=command, args=[*args, "mcp", "--repo", str(repo), *extra], env=dict(os.environ)
    )
    async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


class Agent:
    """A synchronous face on one ClientSession that lives in the portal's event loop."""

    def __init__(self, portal: BlockingPortal, session: ClientSession) -> None:
        self.portal, self.session = portal, session

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        return self.portal.call(self.session.call_tool, name, arguments or {})

    def answer(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        result = self.call(name, arguments)
        assert not result.is_error, result.content[0].text
        assert result.structured_content is not None
        # the text block is the same JSON, for clients that read only text
        assert json.loads(result.content[0].text) == result.structured_content
        return result.structured_content

    def error(self, name: str, arguments: dict[str, Any] | None = None) -> str:
        result = self.call(name, arguments)
        assert result.is_error, f"{name} {arguments} should be a tool error"
        (block,) = result.content
        assert "\n" not in block.text.strip() and "Traceback" not in block.text
        return block.text


@pytest.fixture(scope="module")
def connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Opens a stdio server on a repository for the module; every server is closed at the module's end."""
    logs = tmp_path_factory.mktemp("mcp-logs")
    with start_blocking_portal() as portal:
        opened: list[Any] = []

        def open_agent(repo: Path, *extra: str) -> Agent:
            errlog = open(logs / f"{repo.name}.stderr", "w")  # noqa: SIM115  closed below
            manager = portal.wrap_async_context_manager(_stdio_session(repo, errlog, *extra))
            session = manager.__enter__()
            opened.append((manager, errlog))
            return Agent(portal, session)

        yield open_agent
        for manager, errlog in reversed(opened):
            manager.__exit__(None, None, None)
            errlog.close()


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of examples/shop indexed once by the real CLI."""
    shop = copy_shop(tmp_path_factory.mktemp("mcp") / "shop")
    cg_command("index", str(shop))
    return shop


@pytest.fixture(scope="module")
def agent(connect, repo: Path) -> Agent:
    return connect(repo)


def cli_json(repo: Path, *args: str) -> Any:
    return json.loads(cg_command(*args, "--repo", str(repo), "--json").stdout)


def test_lists_every_tool_with_a_description_and_typed_input(agent: Agent) -> None:
    tools = {t.name: t for t in agent.portal.call(agent.session.list_tools).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 80, tool.name
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
    limit = tools["search"].input_schema["properties"]["limit"]
    assert limit["type"] == "integer" and limit["minimum"] == 1
    assert tools["impact"].input_schema["required"] == ["symbol"]
    assert tools["explain"].input_schema["properties"]["budget"]["anyOf"][0]["minimum"] == 100
    assert "write" not in tools["cypher"].input_schema["properties"]
    assert tools["cypher"].annotations.read_only_hint and not tools["index"].annotations.read_only_hint


# (tool, its arguments, the CLI command asking the same, the key a list answer sits under)
SAME_QUESTION = [
    ("search", {"query": "coupon has expired", "limit": 3}, ["search", "coupon has expired", "-n", "3"], "hits"),
    (
        "search",
        {"query": "retry backoff", "docs": True, "limit": 2},
        ["search", "retry backoff", "--docs", "-n", "2"],
        "hits",
    ),
    (
        "explain",
        {"query": "how is a failed payment retried?", "depth": 1, "budget": 1500},
        ["explain", "how is a failed payment retried?", "--depth", "1", "--budget", "1500"],
        None,
    ),
    ("impact", {"symbol": "compute_backoff", "depth": 2}, ["impact", "compute_backoff", "--depth", "2"], None),
    (
        "callers",
        {"symbol": "schedule_payment_retry", "depth": 2},
        ["callers", "schedule_payment_retry", "--depth", "2"],
        None,
    ),
    (
        "callees",
        {"symbol": "schedule_payment_retry", "limit": 3},
        ["callees", "schedule_payment_retry", "-n", "3"],
        None,
    ),
    (
        "path",
        {"source": "handle_invoice_payment_failed", "target": "compute_backoff", "k": 2},
        ["path", "handle_invoice_payment_failed", "compute_backoff", "-k", "2"],
        None,
    ),
    (
        "cypher",
        {
            "query": "MATCH (f:Symbol)-[:CALLS]->(g:Symbol) WHERE g.name = $name"
            " RETURN f.qualname AS caller, f.path AS path, f.start_line AS line ORDER BY caller",
            "params": {"name": "compute_backoff"},
        },
        [
            "cypher",
            "MATCH (f:Symbol)-[:CALLS]->(g:Symbol) WHERE g.name = $name"
            " RETURN f.qualname AS caller, f.path AS path, f.start_line AS line ORDER BY caller",
            "-p",
            "name=compute_backoff",
        ],
        "rows",
    ),
    ("status", {}, ["status"], None),
]


@pytest.mark.parametrize(("tool", "arguments", "command", "key"), SAME_QUESTION, ids=[q[0] for q in SAME_QUESTION])
def test_each_tool_answers_what_the_cli_json_answers(agent: Agent, repo: Path, tool, arguments, command, key) -> None:
    answer = agent.answer(tool, arguments)
    expected = cli_json(repo, *command)
    assert (answer[key] if key else answer) == expected
    assert expected, f"{tool}: an empty answer proves nothing"


def test_answers_cite_path_and_lines(agent: Agent) -> None:
    hits = agent.answer("search", {"query": "payment retry", "limit": 2})["hits"]
    assert "shop.payments.retry.schedule_payment_retry" in [h["qualname"] for h in hits]
    assert all(h["path"].startswith("shop/payments/") and 0 < h["start_line"] <= h["end_line"] for h in hits)
    flow = agent.answer("explain", {"query": "how is a failed payment retried?", "depth": 1})
    assert all(node["path"] and node["start_line"] <= node["end_line"] for node in flow["nodes"])
    callers = agent.answer("callers", {"symbol": "compute_backoff"})
    assert callers["symbol"]["path"] == "shop/payments/retry.py"


def test_errors_are_one_line_tool_errors_and_the_server_keeps_serving(agent: Agent, repo: Path) -> None:
    unknown = agent.error("impact", {"symbol": "refund_everything_twice"})
    cli = cg_command("impact", "refund_everything_twice", "--repo", str(repo), check=False)
    assert cli.returncode != 0 and unknown.endswith(cli.stderr.strip().removeprefix("cg: "))

    assert "limit" in agent.error("search", {"query": "retry", "limit": 0})
    assert "symbol" in agent.error("callers", {})  # a required argument missing
    assert "depth" in agent.error("impact", {"symbol": "compute_backoff", "depth": "deep"})
    assert "nothing to look for" in agent.error("search", {"query": "   "})
    assert "Unknown tool" in agent.error("refactor", {"symbol": "compute_backoff"})

    symbols = agent.answer("cypher", {"query": "MATCH (s:Symbol) RETURN count(*) AS n"})["rows"][0]["n"]
    assert "DETACH" in agent.error("cypher", {"query": "MATCH (n) DETACH DELETE n"})
    assert "writes the graph" in agent.error("cypher", {"query": "CREATE (:Symbol {id: 'x'})"})
    assert "LOAD" in agent.error("cypher", {"query": "LOAD FROM '/etc/passwd' RETURN *"})
    agent.error("cypher", {"query": "MATCH (s:Symbol RETURN s"})  # not Cypher at all
    assert agent.answer("cypher", {"query": "MATCH (s:Symbol) RETURN count(*) AS n"})["rows"][0]["n"] == symbols

    # and after all of that, questions are still answered
    assert agent.answer("callers", {"symbol": "compute_backoff"})["callers"]


def test_a_missing_index_is_an_error_until_the_index_tool_builds_it(connect, tmp_path: Path) -> None:
    fresh = copy_shop(tmp_path / "unindexed")
    (fresh / "shop" / "half_written.py").write_text("def broken(:\n    pass\n")  # a file that fails to parse
    agent = connect(fresh)
    assert "cg index" in agent.error("search", {"query": "payment retry"})
    assert "cg index" in agent.error("status")

    summary = agent.answer("index")
    assert summary["mode"] == "full" and summary["symbols"] > 100
    # jedi ran in worker processes (not on the main thread), which inherit fd 1: the protocol survived them
    assert summary["syntax_errors"] and summary["jedi_workers"] > 0
    assert agent.answer("search", {"query": "payment retry", "limit": 1})["hits"][0]["qualname"]

    # an edit, then `index` again: incremental, and the next answer reads the new generation
    retry = fresh / "shop" / "payments" / "retry.py"
    retry.write_text(
        retry.read_text()
        + "\n\ndef jittered_backoff(attempt: int) -> float:\n    return compute_backoff(attempt, 1.0, 2.0, 60.0)\n"
    )
    summary = agent.answer("index")
    assert summary["mode"] == "incremental" and summary["changed"] == 1
    again = json.loads(cg_command("index", str(fresh), "--json").stdout)  # nothing left for the CLI to do
    assert set(summary) == set(again) and again["changed"] == again["added"] == 0
    callers = agent.answer("callers", {"symbol": "compute_backoff"})["callers"]
    assert "shop.payments.retry.jittered_backoff" in {c["qualname"] for c in callers}
    assert agent.answer("status")["fresh"] is True


def test_a_run_outside_the_server_is_seen_by_the_next_call(connect, tmp_path: Path) -> None:
    """The session reads one generation; `cg index` in another process switches it, and the server reopens."""
    shop = copy_shop(tmp_path / "outside")
    cg_command("index", str(shop))
    agent = connect(shop)
    assert agent.answer("search", {"query": "retry", "limit": 1})["hits"]
    (shop / "shop" / "audit.py").write_text(
        "from shop.payments.retry import compute_backoff\n\n\n"
        "def audit_backoff():\n    return compute_backoff(1, 1.0, 2.0, 9.0)\n"
    )
    cg_command("index", str(shop))
    callers = agent.answer("callers", {"symbol": "compute_backoff"})["callers"]
    assert "shop.audit.audit_backoff" in {c["qualname"] for c in callers}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_streamable_http_on_loopback(agent: Agent, repo: Path, tmp_path: Path) -> None:
    port = _free_port()
    log = tmp_path / "http.stderr"
    with open(log, "w") as errlog:
        server = subprocess.Popen([*_cg(), "mcp", "--repo", str(repo), "--http", "--port", str(port)], stderr=errlog)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
        assert f"http://127.0.0.1:{port}/mcp" in log.read_text()

        async def ask() -> tuple[set[str], Any]:
            async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    tools = {t.name for t in (await session.list_tools()).tools}
                    return tools, await session.call_tool("impact", {"symbol": "compute_backoff"})

        tools, result = agent.portal.call(ask)
        assert tools == TOOLS and not result.is_error
        assert result.structured_content == agent.answer("impact", {"symbol": "compute_backoff"})
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_without_the_sdk_cg_mcp_says_which_extra_to_install(tmp_path: Path) -> None:
    """The default install has no mcp: one line naming the extra, not a traceback."""
    shadow = tmp_path / "shadow"
    (shadow / "mcp").mkdir(parents=True)
    (shadow / "mcp" / "__init__.py").write_text("raise ImportError('no mcp here', name='mcp')\n")
    pythonpath = os.pathsep.join([str(shadow), os.environ.get("PYTHONPATH", "")])
    done = cg_command("mcp", "--repo", str(tmp_path), check=False, env={"PYTHONPATH": pythonpath})
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert "pip install 'cg[mcp]'" in done.stderr and "Traceback" not in done.stderr
    shutil.rmtree(shadow)


def test_a_bad_repo_is_one_line_before_any_serving(tmp_path: Path) -> None:
    done = cg_command("mcp", "--repo", str(tmp_path / "nowhere"), check=False)
    assert done.returncode != 0 and done.stdout == ""
    assert done.stderr.strip() == f"cg: no such directory: {tmp_path / 'nowhere'}"


def test_changes_answers_what_cg_changes_json_answers(connect, tmp_path: Path) -> None:
    shop = commit_history(copy_shop(tmp_path / "changes" / "shop"))
    cg_command("index", str(shop))
    agent = connect(shop)
    retry = shop / "shop" / "payments" / "retry.py"
    retry.write_text(retry.read_text().replace(CAPPED, CAPPED.replace("min(", "max(0.0, min(") + ")", 1))
    answer = agent.answer("changes")
    assert answer == cli_json(shop, "changes")
    assert [c["qualname"] for c in answer["changed"]] == ["shop.payments.retry.compute_backoff"]
    assert agent.answer("changes", {"rev": "HEAD~1", "depth": 1}) == cli_json(shop, "changes", "HEAD~1", "--depth", "1")
    assert "unknown revision" in agent.error("changes", {"rev": "no-such-branch"})


def test_with_watch_the_answers_follow_edits_without_an_index_call(connect, tmp_path: Path) -> None:
    shop = copy_shop(tmp_path / "watched")
    cg_command("index", str(shop))
    agent = connect(shop, "--watch")
    assert "shop.payments.retry.jittered_backoff" not in {
        c["qualname"] for c in agent.answer("callers", {"symbol": "compute_backoff"})["callers"]
    }
    retry = shop / "shop" / "payments" / "retry.py"
    retry.write_text(
        retry.read_text()
        + "\n\ndef jittered_backoff(attempt: int) -> float:\n    return compute_backoff(attempt, 1.0, 2.0, 60.0)\n"
    )
    deadline = time.monotonic() + 120
    while True:
        callers = {c["qualname"] for c in agent.answer("callers", {"symbol": "compute_backoff"})["callers"]}
        if "shop.payments.retry.jittered_backoff" in callers or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert "shop.payments.retry.jittered_backoff" in callers
    assert agent.answer("status")["fresh"] is True
