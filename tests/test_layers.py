"""The layering of shared/ARCHITECTURE.md holds: no module imports upward, no benchmark imports the CLI."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_no_module_imports_upward() -> None:
    """import-linter's layers contract ([tool.importlinter] in pyproject.toml) is kept."""
    lint = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run([str(lint)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "1 kept, 0 broken" in result.stdout


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_benchmarks_do_not_import_the_cli() -> None:
    """Benchmarks measure the library through cg.api or its modules, never through CLI privates."""
    scripts = sorted((ROOT / "benchmarks").rglob("*.py"))
    scripts = [p for p in scripts if "cases" not in p.parts and "data" not in p.parts]
    assert scripts, "no benchmark scripts found"
    offenders = {
        str(p.relative_to(ROOT)): sorted(m for m in _imported_modules(p) if m == "cg.cli" or m.startswith("cg.cli."))
        for p in scripts
    }
    assert not {k: v for k, v in offenders.items() if v}
