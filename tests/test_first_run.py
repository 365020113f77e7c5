"""A first run of scripts/test on a machine without what it needs: it says in one line what is missing
(a JDK 17 or 21, Maven, Node.js with npm, Go) and how to get it, and stops before creating .venv or
downloading anything."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ("bash", "dirname", "sed", "readlink", "cut", "du")


@pytest.fixture
def machine(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A copy of scripts/test, a PATH holding only the shell tools it uses, a HOME with no Neo4j cached,
    and a python that answers the version check but stops at ``-m venv`` (exit 3), so nothing is built."""
    checkout = tmp_path / "cg"
    (checkout / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "test", checkout / "scripts" / "test")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in TOOLS:
        found = shutil.which(tool)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    python = bin_dir / "python3"
    python.write_text(f'#!{shutil.which("bash")}\n[ "$1" = -c ] && exec {sys.executable} "$@"\nexit 3\n')
    python.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAVA", "CG_", "XDG_"))}
    env.update(PATH=str(bin_dir), HOME=str(tmp_path / "home"), PYTHON=str(python))
    return checkout, bin_dir, env


def _tool(bin_dir: Path, name: str, output: str = "") -> None:
    path = bin_dir / name
    path.write_text(f"#!{shutil.which('bash')}\necho '{output}' >&2\n")
    path.chmod(0o755)


def _node_and_go(bin_dir: Path, node_major: int = 20, go: str = "go1.26.8") -> None:
    """Stand-ins for the precise pass's toolchains: a node whose ``-e`` check sees ``node_major``, an
    npm, and a go whose ``go env GOVERSION`` prints ``go``."""
    bash = shutil.which("bash")
    node = bin_dir / "node"
    node.write_text(f"#!{bash}\n[ {node_major} -ge 18 ]\n")
    (bin_dir / "go").write_text(f"#!{bash}\necho {go}\n")
    _tool(bin_dir, "npm")
    for name in ("node", "go"):
        (bin_dir / name).chmod(0o755)


def _run(checkout: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [shutil.which("bash") or "bash", str(checkout / "scripts" / "test")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_no_jdk_and_no_maven_is_one_line_before_anything_is_made(machine):
    checkout, _, env = machine
    done = _run(checkout, env)
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith(
        "scripts/test: missing a JDK 17 or 21, Maven (mvn), Node.js 18+ with npm (the precise pass's"
        " scip-typescript runs on it), Go 1.24+ (scip-go, the precise pass's Go indexer, is built with it): "
    )
    assert "apt-get install openjdk-21-jdk-headless maven nodejs npm golang" in line
    assert "brew install openjdk@21 maven node go" in line
    assert not (checkout / ".venv").exists()


def test_an_old_node_and_an_old_go_are_named(machine):
    checkout, bin_dir, env = machine
    _tool(bin_dir, "java", "    java.specification.version = 21")
    _tool(bin_dir, "javac")
    _tool(bin_dir, "mvn")
    _node_and_go(bin_dir, node_major=16, go="go1.22.5")
    done = _run(checkout, env)
    assert done.returncode == 1
    assert "missing Node.js 18+ with npm" in done.stderr and ", Go 1.24+ (" in done.stderr
    assert "JDK" not in done.stderr.split(":")[1] and not (checkout / ".venv").exists()


def test_a_java_neo4j_does_not_run_on_is_named(machine):
    checkout, bin_dir, env = machine
    _tool(bin_dir, "java", "    java.specification.version = 11")
    _tool(bin_dir, "mvn")
    done = _run(checkout, env)
    assert done.returncode == 1
    assert "missing a JDK 17 or 21 (found Java 11; or set CG_NEO4J_JAVA to a Java 17/21)," in done.stderr
    assert "Maven (mvn)" not in done.stderr


def test_a_jre_without_javac_is_named(machine):
    checkout, bin_dir, env = machine
    _tool(bin_dir, "java", "    java.specification.version = 21")
    _tool(bin_dir, "mvn")
    done = _run(checkout, env)
    assert done.returncode == 1 and "missing javac (Java 21 is there, but as a JRE" in done.stderr


def test_with_a_jdk_and_maven_it_goes_on_and_says_what_it_does(machine):
    checkout, bin_dir, env = machine
    _tool(bin_dir, "java", "    java.specification.version = 21")
    _tool(bin_dir, "javac")
    _tool(bin_dir, "mvn")
    _node_and_go(bin_dir)
    done = _run(checkout, env)
    assert done.returncode == 3  # the stand-in python stopped at `-m venv`
    assert "missing" not in done.stderr
    assert done.stderr.startswith("scripts/test: creating .venv with ")
