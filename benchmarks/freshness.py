"""Freshness benchmark: after a one-file edit, how long does incremental `cg index` take compared
with a full re-index of the same tree?

Project: requests 2.32.3 (the ingest benchmark's sdist; it has no git history, so blob shas drive the
plan). Everything runs in one process with one embedder, so the model is loaded once: its load time
is reported on its own line and excluded from every other number. The full re-index is measured on a
warm embedding cache (the same content was embedded before), which is the fair baseline: a full run
re-parses, re-resolves and re-writes everything but embeds nothing new either.

Edits, each applied to the tree the previous one left and then timed:
- body of a leaf function (help.py ``info``: nothing else calls it);
- body of a widely used helper (utils.py ``super_len``);
- a new function added to models.py (its callers must be looked for everywhere);
- a function renamed (sessions.py ``merge_setting`` -> ``merge_setting_v2``, callers left as they are);
- nothing changed at all.

    python benchmarks/freshness.py          # writes the "Freshness" section of benchmarks/RESULTS.md
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from ingest import fetch_sdist  # noqa: E402
from results import machine_line, write_section  # noqa: E402

from cg.config import load_settings  # noqa: E402
from cg.embed import embedder_for  # noqa: E402
from cg.graph.kuzu_store import KuzuStore  # noqa: E402
from cg.ingest.pipeline import index_repository  # noqa: E402

FULL_RUNS = 2


def replace_in(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    if old not in text:
        raise SystemExit(f"benchmark edit no longer applies to {path.name}: {old!r} not found")
    path.write_text(text.replace(old, new, 1))


def edits(src: Path) -> list[tuple[str, callable]]:
    pkg = src / "requests"
    return [
        (
            "body of a leaf function (help.py `info`)",
            lambda: replace_in(pkg / "help.py", "def info():\n", "def info():\n    _unused_marker = 1\n"),
        ),
        (
            "body of a widely used helper (utils.py `super_len`)",
            lambda: replace_in(pkg / "utils.py", "def super_len(o):\n", "def super_len(o):\n    _unused_marker = 1\n"),
        ),
        (
            "new function in models.py",
            lambda: (pkg / "models.py").write_text(
                (pkg / "models.py").read_text()
                + "\n\ndef response_is_json(response):\n"
                + "    return 'json' in response.headers.get('content-type', '')\n"
            ),
        ),
        (
            "function renamed, callers unchanged (sessions.py `merge_setting`)",
            lambda: replace_in(pkg / "sessions.py", "def merge_setting(", "def merge_setting_v2("),
        ),
        ("nothing changed", lambda: None),
    ]


def timed(settings, store, embedder, **kwargs) -> tuple[float, dict]:
    started = time.perf_counter()
    summary = index_repository(settings, store, embedder, **kwargs)
    wall = time.perf_counter() - started - summary.seconds.get("model", 0.0)
    return wall, summary


def main() -> None:
    source = fetch_sdist("requests", "2.32.3")
    with tempfile.TemporaryDirectory() as scratch:
        repo = Path(scratch) / "requests"
        shutil.copytree(source, repo)
        # a private embedding cache: the first full run embeds everything (and loads the model), so
        # the texts an edit creates are really new to the model, not left over from an earlier run
        settings = replace(load_settings(repo), cache_dir=Path(scratch) / "cache")
        embedder = embedder_for(settings)
        store = KuzuStore(repo / ".cg" / "graph.kuzu")
        try:
            cold, first = timed(settings, store, embedder, full=True)  # fills the cache, loads the model
            model_load = first.seconds.get("model", 0.0)
            fulls = [timed(settings, store, embedder, full=True) for _ in range(FULL_RUNS)]
            full_wall = statistics.median(w for w, _ in fulls)
            full_summary = fulls[-1][1]
            rows = []
            for label, edit in edits(repo / "src"):
                edit()
                before = embedder.embedded
                wall, s = timed(settings, store, embedder)
                s.embedded -= before  # the embedder counts over its whole life
                assert s.mode == "incremental", s
                rows.append(
                    f"| {label} | {s.changed + s.added} | {s.affected} | {s.jedi_sites} | {s.embedded} |"
                    f" {wall:.2f} | {full_wall / wall:.0f}x |"
                )
                print(rows[-1], flush=True)
        finally:
            store.close()
    stages = ", ".join(f"{k} {v:.1f}s" for k, v in full_summary.seconds.items() if k != "model")
    body = f"""{machine_line()}

`python benchmarks/freshness.py`: requests 2.32.3 ({full_summary.files} files, {full_summary.symbols}
definitions), embedded store, jedi resolution, one process. Model load, excluded from every time
below: {model_load:.1f} s (tokenizer and weights, once per process). Full re-index on a warm
embedding cache (median of {FULL_RUNS}): **{full_wall:.2f} s** ({stages}); the first, cold run (every
text embedded, into a private cache) took {cold:.1f} s.

Each edit is applied to the tree the previous one left, then `cg index` (incremental) runs. Files:
changed or added files; re-resolved: unchanged files whose edges were recomputed because they name
or point into what changed; jedi sites: call sites, imports and bases asked of jedi again; embedded:
texts that went through the model (everything else came from the cache).

| edit | files | re-resolved | jedi sites | embedded | incremental s | vs full |
|---|---:|---:|---:|---:|---:|---:|
""" + "\n".join(rows)
    write_section("Freshness: incremental re-index after a one-file edit", body)


if __name__ == "__main__":
    main()
