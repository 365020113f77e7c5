"""A repository is untrusted input: what it ships in `.cg/` or as special files never runs code,
never redirects the index outside the repository, and never hangs a run."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import msgspec
import pytest

from cg.ingest.state import IndexState, load_state
from tests.conftest import cg_command

PAYMENTS = '''"""Card payments."""


def charge_card(amount_cents: int) -> bool:
    """Charge the customer's card; False when it is declined."""
    return amount_cents < 100_000


def retry_charge(amount_cents: int, attempts: int = 3) -> bool:
    for _ in range(attempts):
        if charge_card(amount_cents):
            return True
    return False
'''


class _Planted:
    """Unpickling this would create the file named in ``marker``: proof that code ran."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.fixture
def small_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "billing"
    (repo / "billing").mkdir(parents=True)
    (repo / "billing" / "payments.py").write_text(PAYMENTS)
    return repo


def test_a_pickle_shipped_in_dot_cg_is_never_loaded(small_repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "code-ran"
    (small_repo / ".cg").mkdir()
    planted = small_repo / ".cg" / "state-kuzu.pickle"
    planted.write_bytes(pickle.dumps(_Planted(str(marker))))
    cg_command("index", str(small_repo))
    assert not marker.exists()
    assert not planted.exists()  # removed when the state was saved, never read
    state = load_state(small_repo / ".cg" / "state-kuzu.msgpack")
    assert state is not None and "billing/payments.py" in state.files
    assert (small_repo / ".cg" / ".gitignore").read_text().splitlines()[-1] == "*"


def test_a_state_that_is_not_cgs_is_ignored_not_trusted(tmp_path: Path) -> None:
    junk = tmp_path / "state-kuzu.msgpack"
    junk.write_bytes(msgspec.msgpack.encode({"fingerprint": 7, "files": "everything"}))
    assert load_state(junk) is None
    junk.write_bytes(b"\x00\xff not msgpack at all")
    assert load_state(junk) is None
    good = IndexState(fingerprint="abc", token="t")
    junk.write_bytes(msgspec.msgpack.encode(good))
    assert load_state(junk) == good


def test_a_dot_cg_symlink_is_refused_in_one_line(small_repo: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (small_repo / ".cg").symlink_to(elsewhere, target_is_directory=True)
    for args in (("index", str(small_repo)), ("search", "charge card", "--repo", str(small_repo))):
        result = cg_command(*args, check=False)
        assert result.returncode == 1, result.stderr
        assert "symbolic link" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert list(elsewhere.iterdir()) == []


def test_a_dot_cg_file_is_refused_in_one_line(small_repo: Path) -> None:
    (small_repo / ".cg").write_text("not a directory")
    result = cg_command("index", str(small_repo), check=False)
    assert result.returncode == 1 and "not a directory" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert (small_repo / ".cg").read_text() == "not a directory"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_in_the_tree_is_skipped_not_waited_on(small_repo: Path) -> None:
    os.mkfifo(small_repo / "billing" / "events.py")
    result = cg_command("index", str(small_repo), "--json")  # conftest's timeout would fail a hang
    summary = msgspec.json.decode(result.stdout)
    assert "billing/events.py" in summary["unreadable"]
    assert summary["symbols"] >= 3
    status = cg_command("status", "--repo", str(small_repo), "--json")
    assert msgspec.json.decode(status.stdout)["fresh"] is True
