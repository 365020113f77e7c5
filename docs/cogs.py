"""Real `cg` output for the README and docs/, pasted by cogapp so it never drifts from what a run prints.

Every output block in README.md and docs/*.md sits between cog markers (HTML comments, so a page
shows only the output) and is written by `shell(...)` below: it runs the real CLI as a subprocess on
a copy of examples/shop and returns `$ command` plus what the command printed. Regenerate every
block after a change (from the repository root, with the dev extra installed):

    PYTHONPATH=$PWD .venv/bin/cog -r -I docs README.md docs/*.md

`tests/test_docs_output.py` runs the same generators in check mode and fails when a block no longer
matches a fresh run.

The copy is committed as a two-commit git history (tests/shop_history.py: the second commit caps the retry
backoff, the history the freshness tests use), with fixed authors and dates so commit shas are stable, and indexed
once with a private embedding cache and a private jedi cache, so the first run starts cold on every
machine. Outputs are cached per process: each command runs once per cog invocation. What still varies
from run to run is masked by `normalise`, the one function used both to write and to check.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

from tests.shop_history import commit_history

ROOT = Path(__file__).resolve().parent.parent
SHOP = ROOT / "examples" / "shop"
TIME = "<time>"  # a stage's seconds: `parse 0.0s` becomes `parse <time>`
DATETIME = "<datetime>"  # when the index was written
REPO = "<repo>"  # the temporary copy's absolute path
GENERATOR_SETTINGS = ("CG_CACHE_DIR", "CG_JEDI_WORKERS", "CG_BACKEND", "CG_EMBED_PRECISION")  # every other CG_/NEO4J_ variable is dropped
_SECONDS = re.compile(r"(?<![\w.])\d+\.\d+s\b")
_DATETIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:?\d\d|Z)?")


def normalise(text: str, repo: Path) -> str:
    """Mask what differs between two honest runs: stage timings, the index's timestamp, the temp path."""
    text = text.replace(str(repo), REPO)
    text = _DATETIME.sub(DATETIME, text)
    return _SECONDS.sub(TIME, text)


@cache
def _workspace() -> tuple[Path, dict[str, str]]:
    """A fresh copy of examples/shop with a short git history, and the environment every command runs in."""
    scratch = Path(tempfile.mkdtemp(prefix="cg-docs-"))
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    repo = scratch / "shop"
    shutil.copytree(SHOP, repo, ignore=shutil.ignore_patterns(".cg", "__pycache__", ".pytest_cache"))
    commit_history(repo)
    env = {
        **os.environ,  # PYTHONPATH included: a worktree's cg wins over the installed one, as in the tests
        "CG_CACHE_DIR": str(scratch / "cache"),  # a cold embedding cache: the counts do not depend on the machine
        "XDG_CACHE_HOME": str(scratch / "xdg"),  # a cold jedi cache as well
        "CG_JEDI_WORKERS": "2",
        "CG_BACKEND": "kuzu",
        # the fp32 model: ONNX Runtime's int8 kernels differ by CPU (the shop's `cg search "coupon has
        # expired"` scored its second hit 0.0339 on an AMD EPYC and 0.0385 on an Intel Xeon, and the
        # third hit differed), so int8 output would match a fresh run only on the CPU that pasted it
        "CG_EMBED_PRECISION": "fp32",
        "TOKENIZERS_PARALLELISM": "false",
        "TRANSFORMERS_VERBOSITY": "error",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    }
    for name in [n for n in env if n.startswith(("NEO4J_", "CG_")) and n not in GENERATOR_SETTINGS]:
        del env[name]
    return repo, env


def _cg_executable() -> list[str]:
    cg = Path(sys.executable).parent / "cg"
    return [str(cg)] if cg.exists() else [sys.executable, "-m", "cg.cli"]


@cache
def _indexes() -> tuple[str, str]:
    """The copy's first `cg index` and a second one straight after it: run once, before any query."""
    return _run("cg index"), _run("cg index --again")


@cache
def _run(command: str) -> str:
    repo, env = _workspace()
    args = [a for a in shlex.split(command) if a != "--again"]  # `--again` only tells the cache key apart
    if args[0] != "cg":
        raise ValueError(f"not a cg command: {command}")
    done = subprocess.run(
        [*_cg_executable(), *args[1:]], cwd=repo, env=env, capture_output=True, text=True, timeout=900
    )
    text = done.stdout if done.returncode == 0 else done.stdout + done.stderr
    return normalise(text.rstrip("\n"), repo)


def output(command: str) -> str:
    """`$ command` and what it printed (stderr too when it failed), run in the copy after it was indexed."""
    _indexes()
    return f"$ {command}\n{_run(command)}"


def shell(*commands: str, fence: str = "```", lines: int = 0, start: str = "") -> str:
    """A fenced block with each command and its output, a blank line between them (cog.out() it).

    `lines` keeps only the first lines of each output, `start` only its lines from the first one that
    begins with `start`; either says how many lines it left out.
    """
    outputs = [output(command) for command in commands]
    if start:
        outputs = [_tail(text, start) for text in outputs]
    if lines:
        outputs = [_head(text, lines + 1) for text in outputs]
    body = "\n\n".join(outputs)
    return f"{fence}\n{body}\n{fence}\n"


def _head(text: str, keep: int) -> str:
    rows = text.split("\n")
    if len(rows) <= keep:
        return text
    return "\n".join([*rows[:keep], f"... ({len(rows) - keep} more lines)"])


def _tail(text: str, start: str) -> str:
    command, *rows = text.split("\n")
    first = next(n for n, row in enumerate(rows) if row.startswith(start))
    return "\n".join([command, f"... ({first} lines before)", *rows[first:]]) if first else text


def indexes() -> str:
    """A fenced block with the copy's first `cg index` (cold caches) and a second one straight after it."""
    first, again = _indexes()
    return f"```\n$ cg index\n{first}\n\n$ cg index      # again, nothing edited\n{again}\n```\n"


def raw(command: str, language: str = "") -> str:
    """Only what the command printed, fenced as `language` (e.g. mermaid, for a diagram GitHub draws)."""
    text = output(command).split("\n", 1)[1]
    return f"```{language}\n{text}\n```\n"


# What a transcript shows of a definition in an answer: its name and its citation.
_CITED = ("qualname", "citation", "depth")
_PLACED = ("qualname", "path", "start_line", "end_line")


def _brief(value: object, width: int = 140) -> str:
    """One line of JSON: a definition cut down to its name and citation, a long line shortened."""
    if isinstance(value, dict) and "qualname" in value:  # short enough whole: no cut in a citation
        keep = _CITED if "citation" in value else _PLACED
        return json.dumps({k: v for k, v in value.items() if k in keep})
    text = json.dumps(value)
    return text if len(text) <= width else text[: width - 4] + " ..."


def _answer_lines(data: dict, items: int) -> list[str]:
    """The answer's keys one a line; a list's first ``items`` one a line, then how many more."""
    lines = []
    for key, value in data.items():
        if isinstance(value, list) and value:
            shown = [f"    {_brief(item)}" for item in value[:items]]
            if len(value) > items:
                shown.append(f"    ... ({len(value) - items} more)")
            lines.append(f'  "{key}": [\n' + ",\n".join(shown) + "\n  ]")
        else:
            lines.append(f'  "{key}": {_brief(value)}')
    return ["{", *",\n".join(lines).split("\n"), "}"]


def mcp_session(*calls: tuple[str, dict], items: int = 2) -> str:
    """A fenced transcript of an agent's session: `cg mcp` started in the indexed copy as an MCP client
    would start it (stdio), each tool call sent through the MCP SDK's own client, and what came back
    (structured content, lists cut to their first `items`; an error as its one line)."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    _indexes()
    repo, env = _workspace()

    async def run() -> list[str]:
        server = StdioServerParameters(
            command=_cg_executable()[0], args=[*_cg_executable()[1:], "mcp"], env=env, cwd=repo
        )
        lines: list[str] = []
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            lines.append(f"> tools/list\n< {', '.join(t.name for t in tools)}")
            for name, arguments in calls:
                result = await session.call_tool(name, arguments)
                lines.append(f"\n> tools/call {name} {json.dumps(arguments)}")
                if result.is_error:
                    lines.append(f"< isError: {result.content[0].text}")
                else:
                    lines += [
                        "< " + line if n == 0 else "  " + line
                        for n, line in enumerate(_answer_lines(result.structured_content, items))
                    ]
        return lines

    body = normalise("\n".join(anyio.run(run)), repo)
    return f"```\n{body}\n```\n"
