"""`cg index --embed later` as a user runs it: the summary says what is left without vectors, `cg status`
and every ranked answer say so too (on stderr for search, so `--json` stays parseable), and a plain
`cg index` afterwards computes them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import cg_command, copy_shop


def test_embed_later_is_reported_until_the_vectors_are_computed(tmp_path: Path):
    repo = copy_shop(tmp_path / "shop")
    env = {"CG_CACHE_DIR": str(tmp_path / "cache"), "CG_RESOLVER": "name"}  # an empty cache: all misses

    later = cg_command("index", str(repo), "--embed", "later", env=env)
    assert "vectors later: " in later.stdout and "embeddings: 0 computed" in later.stdout
    assert "vectors pending:" in cg_command("status", "--repo", str(repo), env=env).stdout

    found = cg_command("search", "retry a failed payment", "--repo", str(repo), "--json", env=env)
    assert "have no vectors yet" in found.stderr
    assert json.loads(found.stdout)[0]["qualname"].endswith("retry_failed_payment")

    explained = cg_command("explain", "how is a failed payment retried?", "--repo", str(repo), env=env)
    assert "have no vectors yet" in explained.stdout and "Nothing in the index matches" not in explained.stdout

    now = cg_command("index", str(repo), env=env)
    assert "vectors later" not in now.stdout and "embeddings: 0 computed" not in now.stdout
    assert "vectors pending" not in cg_command("status", "--repo", str(repo), env=env).stdout
    assert "have no vectors yet" not in cg_command("search", "retry", "--repo", str(repo), env=env).stderr

    bad = cg_command("index", str(repo), "--embed", "soon", env=env, check=False)
    assert bad.returncode != 0 and "unknown embed 'soon'" in bad.stderr and "Traceback" not in bad.stderr
