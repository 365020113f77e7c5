"""Shared by the benchmark scripts: the machine line and section-wise updates of RESULTS.md, so
each script rewrites only its own section and every number in the file comes from a script."""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
HEADER = "# Benchmark results\n\nWritten by the scripts in this folder; never edited by hand.\n"


def model_line() -> str:
    """The embedding variant a default `cg index` uses, from cg's own settings."""
    from cg.config import load_settings

    settings = load_settings(Path(__file__).resolve().parent.parent)
    return f"{settings.model} on {settings.embed_backend} ({settings.embed_precision}), CPU"


def machine_line() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())  # the machines are shared: say how busy this one was
    return (
        f"Machine: {os.cpu_count()} cores ({cpu}){mem}, {platform.system()} {platform.machine()}, "
        f"Python {platform.python_version()}; run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
        f"load average at the end {load} (1, 5, 15 min)."
    )


def write_section(title: str, body: str) -> None:
    text = RESULTS.read_text() if RESULTS.exists() else HEADER
    block = f"## {title}\n\n{body.strip()}\n"
    pattern = re.compile(rf"^## {re.escape(title)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: block + "\n", text)
    else:
        text = text.rstrip("\n") + "\n\n" + block
    RESULTS.write_text(text.rstrip("\n") + "\n")


def write_model_module(path: Path, docstring: str, model: dict) -> None:
    """A fitted model shipped as a Python module (``MODEL: dict[str, Any] = {...}``) under ``docstring``,
    formatted by ruff when the dev tool is there, so the written file passes the format check."""
    path.write_text(f'"""{docstring}"""\n\nfrom typing import Any\n\nMODEL: dict[str, Any] = {model!r}\n')
    ruff = Path(sys.executable).parent / "ruff"
    if ruff.exists():
        subprocess.run([str(ruff), "format", str(path)], check=False, capture_output=True)


def cg_command() -> list[str]:
    """How a benchmark runs the real CLI: this interpreter's ``cg`` script, else ``python -m cg.cli``."""
    executable = Path(sys.executable).parent / "cg"
    return [str(executable)] if executable.exists() else [sys.executable, "-m", "cg.cli"]


def publish(title: str, lines: list[str]) -> None:
    """Print a section's lines and write them to RESULTS.md under ``title``."""
    body = "\n".join(lines)
    print(body, flush=True)
    write_section(title, body)
