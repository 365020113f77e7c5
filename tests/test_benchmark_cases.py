"""The call-graph benchmark's ground truth stays well-formed (keys are exactly each case's definitions,
callees are keys, lists sorted)."""

import subprocess
import sys
from pathlib import Path

VALIDATE = Path(__file__).resolve().parent.parent / "benchmarks" / "callgraph" / "validate_cases.py"


def test_callgraph_cases_are_valid():
    result = subprocess.run([sys.executable, str(VALIDATE), "--no-run"], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "cases in 22 categories: OK" in result.stdout
