"""What a terminal shows: help text printed as written (rich markup never swallows ``[...]``)."""

from __future__ import annotations

import typer
from rich.text import Text

from cg.cli import app
from tests.conftest import cg_command


def _help_strings() -> list[str]:
    group = typer.main.get_command(app)
    texts = [group.help or ""]
    for command in getattr(group, "commands", {}).values():
        texts.append(command.help or "")
        texts.extend(getattr(p, "help", None) or "" for p in command.params)
    return [t for t in texts if t]


def test_every_help_string_prints_as_written():
    texts = _help_strings()
    assert any("[callees]" in t for t in texts)
    for text in texts:
        # rich markup: "\[" is a literal "[", and a "[word]" that is not escaped is read as a style
        assert Text.from_markup(text).plain == text.replace("\\[", "["), text


def test_help_shows_the_callgraph_shape():
    listing = cg_command("--help", env={"COLUMNS": "200"}).stdout
    assert "{caller: [callees]}" in listing
    assert "{caller: [callees]}" in cg_command("callgraph", "--help", env={"COLUMNS": "200"}).stdout


def test_the_summary_counts_agree_with_their_nouns():
    from cg.cli import _status_text, _summary_text
    from cg.ingest.pipeline import IndexSummary
    from cg.ingest.status import Status

    one = IndexSummary(
        repo="shop",
        backend="kuzu",
        files=1,
        symbols=1,
        chunks=1,
        doc_sections=1,
        commits=1,
        commits_new=1,
        edges={"CALLS": 1},
    )
    one.resolver, one.jedi_sites, one.jedi_answered, one.jedi_workers = "jedi", 1, 1, 1
    text = _summary_text(one)
    assert "indexed 1 file, 1 definition (+1 chunk), 1 CALLS into kuzu" in text
    assert "docs: 1 section; history: 1 commit (1 new)" in text
    assert "jedi: answered 1 of 1 site with 1 worker" in text
    many = IndexSummary("shop", "kuzu", mode="incremental", files=29, symbols=219, chunks=128, changed=1, affected=1)
    many.doc_sections, many.commits = 8, 2
    text = _summary_text(many)
    assert "1 unchanged file re-resolved" in text and "index: 29 files, 219 definitions (+128 chunks)" in text
    assert "docs: 8 sections; history: 2 commits (0 new)" in text
    status = Status("shop", "kuzu", "2026-12-01", "a" * 40, "b" * 40, 1, {"File": 1, "Commit": 1, "CALLS": 2})
    assert "1 commit behind HEAD bbbbbbbbbb" in _status_text(status)
    assert "1 file, 0 definitions, 0 doc sections, 1 commit, 2 calls" in _status_text(status)
