"""The real CLI, in a subprocess, as a user runs it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.conftest import cg_command


def test_index_summary_reports_bad_files_and_indexes_the_rest(indexed_shop):
    _, out = indexed_shop
    assert re.search(
        r"indexed 30 files, \d+ definitions \(\+\d+ chunks\)", out
    )  # + pyproject.toml, README.md, docs/payment-retries.md
    assert "binary, skipped: 1 (shop/static/logo.png)" in out
    assert "not UTF-8, skipped: 1 (shop/legacy_rates.py)" in out
    assert "syntax errors (indexed what parsed): 1 (shop/half_written.py: syntax error near line 4" in out
    assert "resolved)" in out


def test_broken_file_is_still_searchable(indexed_shop):
    repo, _ = indexed_shop
    out = json.loads(cg_command("callers", "refund_invoice", "--json", "--repo", str(repo)).stdout)
    assert out["callers"][0]["qualname"] == "shop.half_written.RefundPolicy.allows"


def test_explain_payment_retry_is_a_cited_walkthrough(indexed_shop):
    repo, _ = indexed_shop
    text = cg_command("explain", "payment retry", cwd=repo).stdout
    headings = re.findall(r"^## (\d+)\. (\S+) \((\w+)\) (\[\S+\])$", text, re.M)
    names = [h[1] for h in headings]
    assert "shop.payments.retry.schedule_payment_retry" in names
    assert [int(h[0]) for h in headings] == list(range(1, len(headings) + 1))
    assert ("shop.payments.retry.schedule_payment_retry", "function", "[shop/payments/retry.py:86-117]") in [
        h[1:] for h in headings
    ]
    retry = names.index("shop.payments.retry.schedule_payment_retry") + 1
    delay = names.index("shop.payments.retry.RetryPolicy.delay_for") + 1
    assert f"{delay}. RetryPolicy.delay_for (line 108, jedi)" in text  # what the scheduler calls next
    assert f"- Called by: {retry}. schedule_payment_retry at line 108" in text
    assert "def schedule_payment_retry(" in text
    assert "\n- Entry point: " in text


def test_explain_json(indexed_shop):
    repo, _ = indexed_shop
    data = json.loads(cg_command("explain", "payment retry", "--json", "--repo", str(repo)).stdout)
    assert data["found"] and "shop/payments/retry.py::schedule_payment_retry" in data["seeds"]
    nodes = {n["id"]: n for n in data["nodes"]}
    assert [n["id"] for n in data["nodes"]] == data["order"] and set(data["entries"]) <= set(nodes)
    assert {
        "src": "shop/payments/service.py::PaymentService.charge_invoice",
        "dst": "shop/payments/retry.py::schedule_payment_retry",
        "line": 64,
        "resolved_by": "jedi",
        "type": "CALLS",
    } in data["edges"]
    assert all(e["src"] in nodes and e["dst"] in nodes for e in data["edges"])
    seed = nodes["shop/payments/retry.py::schedule_payment_retry"]
    assert seed["citation"] == "[shop/payments/retry.py:86-117]" and seed["role"] == "seed"
    assert seed["code"].lstrip().startswith("def schedule_payment_retry(")


def test_search_json_fields_and_limit(indexed_shop):
    repo, _ = indexed_shop
    hits = json.loads(cg_command("search", "STRIPE_WEBHOOK_SECRET", "--json", "--limit", "4", cwd=repo).stdout)
    assert len(hits) == 4
    for key in ("qualname", "kind", "path", "start_line", "end_line", "score"):
        assert key in hits[0]
    assert any(h["path"] == "shop/config.py" for h in hits)


def test_callers_and_callees(indexed_shop):
    repo, _ = indexed_shop
    out = cg_command("callers", "schedule_payment_retry", "--repo", str(repo)).stdout
    caller = "shop.payments.service.PaymentService.charge_invoice [shop/payments/service.py:46-72]"
    assert f"  {caller} (calls it at line 64, jedi)" in out
    data = json.loads(cg_command("callees", "RetryPolicy.delay_for", "--json", "--repo", str(repo)).stdout)
    targets = {c["qualname"]: c for c in data["callees"]}
    assert targets["shop.payments.retry.compute_backoff"]["line"] == 55
    assert targets["builtins.max"]["label"] == "External"


def test_cypher_is_read_only_unless_write(indexed_shop):
    repo, _ = indexed_shop
    rows = json.loads(
        cg_command(
            "cypher",
            "MATCH (a:Symbol)-[:CALLS]->(b:Symbol {name: $name}) RETURN a.qualname AS caller ORDER BY caller",
            "--param",
            "name=schedule_payment_retry",
            "--json",
            "--repo",
            str(repo),
        ).stdout
    )
    assert {"caller": "shop.payments.service.PaymentService.charge_invoice"} in rows
    refused = cg_command("cypher", "CREATE (:External {id: 'x'})", "--repo", str(repo), check=False)
    assert refused.returncode != 0
    assert len(refused.stderr.strip().splitlines()) == 1 and "read-only" in refused.stderr
    bad = cg_command("cypher", "MATCH (n RETURN n", "--repo", str(repo), check=False)
    assert bad.returncode != 0 and len(bad.stderr.strip().splitlines()) == 1


def test_missing_path_is_one_line_and_non_zero(tmp_path: Path):
    result = cg_command("index", str(tmp_path / "does-not-exist"), check=False)
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [f"cg: no such directory: {tmp_path / 'does-not-exist'}"]
    assert "Traceback" not in result.stderr


def test_query_without_index_is_one_line(tmp_path: Path):
    result = cg_command("search", "retry", "--repo", str(tmp_path), check=False)
    assert result.returncode != 0
    assert len(result.stderr.strip().splitlines()) == 1 and "cg index" in result.stderr


def test_reindex_is_stable_and_uses_the_cache(indexed_shop):
    repo, _ = indexed_shop
    calls = "MATCH (a:Symbol)-[c:CALLS]->(b) RETURN a.id, b.id, c.line, c.resolved_by ORDER BY a.id, b.id, c.line"
    again = json.loads(cg_command("index", str(repo), "--json").stdout)
    assert again["mode"] == "incremental" and again["changed"] == again["added"] == again["removed_files"] == 0
    assert again["embedded"] == 0 and again["embed_cached"] == 0  # nothing changed: nothing to embed at all
    before = cg_command("cypher", calls, "--repo", str(repo)).stdout.splitlines()
    full = json.loads(cg_command("index", str(repo), "--full", "--json").stdout)
    assert full["mode"] == "full" and full["embedded"] == 0  # a rebuild takes every vector from the cache
    assert full["embed_cached"] >= full["symbols"] + full["chunks"]
    after = cg_command("cypher", calls, "--repo", str(repo)).stdout.splitlines()
    # edge by edge, so that a difference (jedi answering a site differently) names the site
    assert sorted(set(after) - set(before)) == sorted(set(before) - set(after)) == [], (full["jedi_timed_out"],)
    assert (full["symbols"], full["edges"]) == (again["symbols"], again["edges"])


def test_an_index_from_an_older_cg_is_refused_by_queries_and_rebuilt_by_index(tmp_path: Path):
    from tests.conftest import copy_shop

    repo = copy_shop(tmp_path / "shop")
    cg_command("index", str(repo))
    cg_command("cypher", "MATCH (m:Meta {key: 'schema'}) DELETE m", "--write", "--repo", str(repo))
    refused = cg_command("search", "retry", "--repo", str(repo), check=False)
    assert refused.returncode != 0
    assert refused.stderr.strip().splitlines() == [
        f"cg: the index in {repo} was built by an older cg; run `cg index` to rebuild it"
    ]
    cg_command("index", str(repo))
    assert json.loads(cg_command("search", "retry", "--json", "--repo", str(repo)).stdout)
