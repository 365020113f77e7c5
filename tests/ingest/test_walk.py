from __future__ import annotations

from pathlib import Path

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
