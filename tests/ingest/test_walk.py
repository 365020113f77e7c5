from __future__ import annotations

import os
import time
from pathlib import Path

import cg.ingest.walk as walk_module
from cg.ingest.walk import WalkReport, git_blob_sha, module_name, walk


def test_walk_honours_ignores_and_reports_bad_files(tmp_path: Path):
    (tmp_path / ".gitignore").write_text("generated/\n*.tmp.py\n")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "billing.py").write_text("def bill():\n    pass\n")
    (tmp_path / "app" / "scratch.tmp.py").write_text("x = 1\n")
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "client.py").write_text("x = 1\n")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "left_pad.py").write_text("x = 1\n")
    (tmp_path / "app" / "nested").mkdir()
    (tmp_path / "app" / "nested" / ".cgignore").write_text("fixtures.py\n")
    (tmp_path / "app" / "nested" / "fixtures.py").write_text("x = 1\n")
    (tmp_path / "app" / "nested" / "real.py").write_text("x = 1\n")
    (tmp_path / "app" / "blob.py").write_bytes(b"\x00\x01\x02binary")
    (tmp_path / "app" / "latin.py").write_bytes("caf\xe9 = 1\n".encode("latin-1"))
    (tmp_path / "README.md").write_text("# app\n")
    (tmp_path / "LICENSE").write_text("MIT\n")
    report = WalkReport()
    found = [f.path for f in walk(tmp_path, report)]
    assert found == ["README.md", "app/billing.py", "app/nested/real.py"]
    assert report.binary == ["app/blob.py"]
    assert report.not_utf8 == ["app/latin.py"]
    assert report.other_text == 1  # LICENSE: text, no language


def test_blob_sha_matches_git():
    # `printf 'hello\n' | git hash-object --stdin`
    assert git_blob_sha(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"


def test_module_names():
    assert module_name("shop/payments/retry.py") == "shop.payments.retry"
    assert module_name("shop/payments/__init__.py") == "shop.payments"
    assert module_name("src/shop/app.py") == "shop.app"


def test_walk_only_reads_the_paths_it_is_given(tmp_path: Path):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "billing.py").write_text("def bill():\n    pass\n")
    (tmp_path / "app" / "ledger.py").write_text("x = 1\n")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "pad.py").write_text("x = 1\n")
    report = WalkReport()
    found = [f.path for f in walk(tmp_path, report, only={"app/ledger.py", "node_modules/pad.py", "gone.py"})]
    assert found == ["app/ledger.py"]  # ignore rules still apply; paths that do not exist are simply absent
    assert report.seen == 1


def test_a_file_whose_stat_is_the_one_the_last_run_saw_is_not_read_again(tmp_path: Path, monkeypatch):
    """The walk of an incremental run compares each file's stat with the one recorded when it was read
    and reads only the files that differ; a file whose bytes changed but whose size and mtime were put
    back (``cp -p``, ``touch -d``) still differs by its change time."""
    monkeypatch.setattr(walk_module, "RACY_NS", 0)  # the files below were all written just now
    (tmp_path / "billing").mkdir()
    invoice, ledger = tmp_path / "billing" / "invoice.py", tmp_path / "billing" / "ledger.py"
    invoice.write_text("def total(lines):\n    return sum(lines)\n")
    ledger.write_text("ENTRIES = []\n")
    first = {f.path: f for f in walk(tmp_path, WalkReport())}
    assert all(f.stat is not None for f in first.values())
    known = {path: f.stat for path, f in first.items() if f.stat is not None}

    report = WalkReport()
    assert [f.path for f in walk(tmp_path, report, known=known)] == []
    assert report.kept == ["billing/invoice.py", "billing/ledger.py"] and report.seen == 2

    before = invoice.stat()
    time.sleep(0.01)
    invoice.write_text("def total(lines):\n    return max(lines)\n")  # the same length
    os.utime(invoice, ns=(before.st_atime_ns, before.st_mtime_ns))  # and the old mtime
    assert invoice.stat().st_size == before.st_size and invoice.stat().st_mtime_ns == before.st_mtime_ns
    report = WalkReport()
    read = list(walk(tmp_path, report, known=known))
    assert [f.path for f in read] == ["billing/invoice.py"] and b"max(lines)" in read[0].data
    assert report.kept == ["billing/ledger.py"]


def test_a_file_changed_just_before_the_walk_gets_no_stat_to_be_trusted_by(tmp_path: Path):
    """Within ``RACY_NS`` of the walk's start a file may still change in the same tick of the
    filesystem's clock: it gets no stat, so the next walk reads it again (git's "racily clean"
    entries). An mtime set back an hour does not make it settled: its change time is now."""
    assert walk_module.RACY_NS >= 1_000_000_000
    fresh, backdated = tmp_path / "fresh.py", tmp_path / "backdated.py"
    fresh.write_text("RATE = 0.2\n")
    backdated.write_text("RATE = 0.1\n")
    old = time.time() - 3600
    os.utime(backdated, (old, old))
    stats = {f.path: f.stat for f in walk(tmp_path, WalkReport())}
    assert stats == {"backdated.py": None, "fresh.py": None}
