"""Shared fixtures: a copy of examples/shop with some bad files added, indexed once per session."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHOP = ROOT / "examples" / "shop"

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The suite tests the generic resolver wherever TypeScript or JavaScript is indexed, whether or not this
# machine has scip-typescript on PATH; tests/ingest/test_precise.py asks for the precise pass by name.
os.environ["CG_PRECISE"] = "off"


def cg_command(
    *args: str, cwd: Path | None = None, check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a subprocess, as a user would."""
    cg = Path(sys.executable).parent / "cg"
    command = [str(cg)] if cg.exists() else [sys.executable, "-m", "cg.cli"]
    result = subprocess.run(
        [*command, *args], cwd=cwd, capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})}
    )
    if check and result.returncode != 0:
        raise AssertionError(f"cg {' '.join(args)} failed ({result.returncode}):\n{result.stderr}")
    return result


def copy_shop(target: Path) -> Path:
    shutil.copytree(SHOP, target, ignore=shutil.ignore_patterns(".cg", "__pycache__", ".pytest_cache"))
    return target


@pytest.fixture(scope="session")
def shop_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/shop plus three files a real tree has: a binary, a Latin-1 file and a broken file."""
    repo = copy_shop(tmp_path_factory.mktemp("shop") / "shop")
    (repo / "shop" / "static").mkdir()
    (repo / "shop" / "static" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256)))
    (repo / "shop" / "legacy_rates.py").write_bytes(
        "# Taux de change: \xe9t\xe9 2019\nRATES = {'eur': 1.0}\n".encode("latin-1")
    )
    (repo / "shop" / "half_written.py").write_text(
        "def refund_invoice(invoice):\n    return invoice.total_cents\n\n"
        "def broken(:\n    pass\n\n"
        "class RefundPolicy:\n    def allows(self, invoice):\n        return refund_invoice(invoice) > 0\n"
    )
    return repo


@pytest.fixture(scope="session")
def indexed_shop(shop_copy: Path) -> tuple[Path, str]:
    """The shop copy indexed through the real CLI on the embedded store; yields (repo, summary)."""
    result = cg_command("index", str(shop_copy))
    return shop_copy, result.stdout
