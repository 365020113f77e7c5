"""Every pasted output in README.md and docs/ is what a fresh run prints: cogapp re-runs the blocks'
generators (docs/cogs.py: the real CLI on a copy of examples/shop, indexed once) in check mode."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [p for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))] if "[[[cog" in p.read_text()]
REGENERATE = "PYTHONPATH=$PWD .venv/bin/cog -r -I docs README.md docs/*.md"


def test_the_front_page_and_the_usage_page_paste_real_output():
    names = {p.relative_to(ROOT).as_posix() for p in PAGES}
    assert {"README.md", "docs/usage.md"} <= names


def test_every_pasted_output_matches_a_fresh_run():
    files = [p.relative_to(ROOT).as_posix() for p in PAGES]
    done = subprocess.run(
        [sys.executable, "-m", "cogapp", "--check", "--diff", "-I", "docs", *files],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, (
        f"a pasted output no longer matches what cg prints; regenerate with `{REGENERATE}`\n{done.stdout}{done.stderr}"
    )
