"""A repository is untrusted input: what it ships in `.cg/` or as special files never runs code,
never redirects the index outside the repository, and never hangs a run."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import msgspec
import pytest

from cg.config import load_settings
from cg.ingest.pipeline import IndexSummary, extract_repository, resolve_files
from cg.ingest.resolve.python import Resolver
from cg.ingest.state import IndexState, load_state
from cg.model import FileExtraction
from tests.conftest import cg_command
from tests.ingest.helpers import PAYMENTS


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


def test_deep_trees_deep_nesting_and_non_ascii_names_never_stop_a_run(small_repo: Path) -> None:
    """One bad file never stops a run: code nested thousands deep is indexed whole (every extractor walks
    without recursion: the Python file's 3,000 nested calls and the Go file's nesting are extracted), and
    every other file, however deep or however named, is indexed normally. The fall-back path itself is
    covered by tests/ingest/test_pathological.py."""
    deep = small_repo / "billing" / Path(*[f"v{level}" for level in range(100)])
    deep.mkdir(parents=True)
    (deep / "ledger.py").write_text("def close_ledger(period: str) -> str:\n    return period\n")
    nested = 3000
    (small_repo / "billing" / "generated_rules.py").write_text(
        "def discount(cents):\n    return cents\n\n\nRULE = " + "discount(" * nested + "1" + ")" * nested + "\n"
    )
    (small_repo / "gateway").mkdir()
    (small_repo / "gateway" / "rules.go").write_text(
        "package gateway\n\nfunc Fee(cents int) int { return cents }\n\n"
        "func Total() int {\n\treturn " + "Fee(" * nested + "1" + ")" * nested + "\n}\n"
    )
    accented = small_repo / "billing" / "réessais"
    accented.mkdir()
    (accented / "planificateur_échéances.py").write_text(
        "from billing.payments import retry_charge\n\n\ndef relancer_paiement(montant: int) -> bool:\n"
        "    return retry_charge(montant)\n"
    )
    (small_repo / "billing" / "コード.py").write_text("def 請求書(金額: int) -> int:\n    return 金額\n")

    summary = msgspec.json.decode(cg_command("index", str(small_repo), "--json").stdout)
    assert summary["failed"] == []
    assert summary["files"] == 6
    names = {
        row["name"]: row["path"]
        for row in msgspec.json.decode(
            cg_command(
                "cypher", "MATCH (s:Symbol) RETURN s.name AS name, s.path AS path", "--json", cwd=small_repo
            ).stdout
        )
    }
    assert names["close_ledger"] == (deep / "ledger.py").relative_to(small_repo).as_posix()
    assert names["relancer_paiement"] == "billing/réessais/planificateur_échéances.py"
    assert names["請求書"] == "billing/コード.py"
    assert {"charge_card", "retry_charge", "discount", "Fee", "Total"} <= set(names)
    callers = cg_command("callers", "retry_charge", "--json", cwd=small_repo).stdout
    assert "relancer_paiement" in callers
    rules = msgspec.json.decode(cg_command("callers", "discount", "--json", cwd=small_repo).stdout)
    assert "billing.generated_rules" in {c["qualname"] for c in rules["callers"]}  # the module's 3,000 calls

    strict = cg_command("index", str(small_repo), "--full", "--strict", check=False)
    assert strict.returncode == 0, strict.stderr


def test_a_resolver_failure_on_one_file_is_reported_and_the_others_resolve(
    small_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (small_repo / "billing" / "invoices.py").write_text(
        "from billing.payments import charge_card\n\n\ndef settle_invoice(cents: int) -> bool:\n"
        "    return charge_card(cents)\n"
    )
    original = Resolver.edges

    def edges(self: Resolver, ex: FileExtraction):
        if ex.file.path == "billing/invoices.py":
            raise RecursionError("maximum recursion depth exceeded")
        return original(self, ex)

    monkeypatch.setattr(Resolver, "edges", edges)
    settings = load_settings(small_repo, resolver="name")
    summary = IndexSummary(str(small_repo), "kuzu")
    extractions, _ = extract_repository(settings, summary=summary)
    resolved = resolve_files(settings, extractions, None, summary=summary)
    assert [str(f) for f in summary.failed] == [
        "billing/invoices.py: resolve: nested too deeply to analyse (RecursionError)"
        " -> definitions kept, no call, import or inheritance edges"
    ]
    assert {e.type for e in resolved["billing/invoices.py"].edges} == {"DEFINES"}  # still attached to its file
    assert any(e.dst.endswith("charge_card") for e in resolved["billing/payments.py"].edges)
