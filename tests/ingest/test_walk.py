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
    report = WalkReport()
    found = [f.path for f in walk(tmp_path, report)]
    assert found == ["app/billing.py", "app/nested/real.py"]
    assert report.binary == ["app/blob.py"]
    assert report.not_utf8 == ["app/latin.py"]
    assert report.other_text == 1  # README.md: text, no language yet


def test_blob_sha_matches_git():
    # `printf 'hello\n' | git hash-object --stdin`
    assert git_blob_sha(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"


def test_module_names():
    assert module_name("shop/payments/retry.py") == "shop.payments.retry"
    assert module_name("shop/payments/__init__.py") == "shop.payments"
    assert module_name("src/shop/app.py") == "shop.app"
