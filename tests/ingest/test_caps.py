"""Per-file caps: a generated file of a quarter of a million call lines is indexed in bounded time and
memory (it took 10 minutes and 1.8 GB before the caps), the summary names it, and the rest of the
repository is indexed as it would be without it."""

from __future__ import annotations

import json
import time
from pathlib import Path

from cg.cli import _summary_text
from cg.config import load_settings
from cg.ingest.chunk import chunk_file
from cg.ingest.pipeline import IndexSummary
from tests.conftest import cg_command
from tests.ingest.helpers import PAYMENTS, extract_source

CALL_LINES = 247_000


def test_a_generated_file_is_capped_reported_and_the_rest_indexed(tmp_path: Path) -> None:
    repo = tmp_path / "shop"
    (repo / "shop" / "generated").mkdir(parents=True)
    (repo / "shop" / "payments.py").write_text(PAYMENTS)
    # minified-style: one-letter names, four bytes a call line, just under max_file_bytes
    routes = "def _():\n    return 1\n\n\n" + "_()\n" * CALL_LINES
    (repo / "shop" / "generated" / "routes.py").write_text(routes)
    assert len(routes) < load_settings(repo).max_file_bytes  # indexed, not skipped as too large

    started = time.monotonic()
    # jedi gives up on a file after its budget whatever the caps; a short one keeps this test short
    result = cg_command("index", str(repo), "--json", env={"CG_JEDI_BUDGET": "5"})
    seconds = time.monotonic() - started
    summary = json.loads(result.stdout)
    assert seconds < 240, f"indexing took {seconds:.0f} s"  # 10 min 45 s before the caps, ~1 min under load
    assert summary["capped"] == [
        f"shop/generated/routes.py: {CALL_LINES} call sites, kept the first 10000",
        f"shop/generated/routes.py: {summary['capped'][1].split()[1]} chunks, kept the first 200",
    ]
    assert summary["chunks"] <= 200 + 2  # the capped fragments and a table of contents per file
    # range(), charge_card(), the for loop (its __iter__) and `amount_cents < 100_000` (an operator: __lt__)
    assert summary["call_sites"] == 10_000 + 4
    assert summary["files"] == 2 and not summary["failed"]

    derived = ("resolved_share", "secrets_redacted")  # properties as_dict adds
    text = _summary_text(IndexSummary(**{k: v for k, v in summary.items() if k not in derived}))
    assert "over the per-file caps (max_calls_per_file, max_chunks_per_file): 2 (shop/generated/routes.py" in text
    callers = json.loads(cg_command("callers", "charge_card", "--json", cwd=repo).stdout)
    assert "retry_charge" in json.dumps(callers)


def test_the_chunk_cap_keeps_every_definition_and_the_table_of_contents() -> None:
    body = "\n".join(f"    total_cents += invoice_line_{i}(total_cents)" for i in range(3000))
    ex = extract_source("shop/invoices.py", f"def total(total_cents):\n{body}\n    return total_cents\n")
    whole = chunk_file(ex)
    capped = chunk_file(ex, max_chunks=5)
    assert len(whole.chunks) > 6 and whole.dropped == 0
    assert [c.id for c in capped.chunks] == [c.id for c in whole.chunks[:5]] + [whole.chunks[-1].id]
    assert capped.chunks[-1].kind == "toc" and capped.dropped == len(whole.chunks) - 6
    assert capped.symbols == whole.symbols and capped.embed_texts == whole.embed_texts
