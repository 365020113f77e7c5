"""The read-only gate in-process, for the lexical corners the CLI table (tests/cli/test_cypher_readonly.py)
does not spell out, and the docs' list of what it accepts kept equal to the code's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cg.graph.readonly import _REFUSED, PROCEDURES, QueryRefused, plan_query, tokenize, vet

DOC = (Path(__file__).resolve().parents[2] / "docs" / "cypher.md").read_text()

ACCEPTED = [
    "MATCH (s:`Symbol`) RETURN s.`CREATE`, s.`a``DELETE`",  # a doubled backtick stays inside the name
    "MATCH (s:Symbol) WHERE s.text = 'a \\\\' RETURN s",  # an escaped backslash, then the quote ends it
    'MATCH (s:Symbol) WHERE s.text = "\\"CREATE\\"" RETURN s',
    "MATCH (s:Symbol) WHERE s:Symbol&!External RETURN s.name",
    "MATCH (s:Symbol)-[:CALLS*1..3]->(t) RETURN t.name",
    "MATCH (s:Symbol) WHERE s.name =~ 'coupon.*' RETURN s ORDER BY s.name DESC SKIP 1 LIMIT 2",
    "MATCH (s:Symbol) RETURN CASE WHEN s.kind = 'class' THEN 'type' ELSE 'code' END AS what",
    "MATCH p = (a)-[:CALLS*]->(b) RETURN list_transform(nodes(p), n -> n.qualname)",
    "MATCH (s:Symbol) RETURN [x IN collect(s.name) WHERE x STARTS WITH 'validate' | x] AS names",
    "WITH 1 AS start MATCH (stop:Symbol) RETURN start, stop.name",  # START/STOP are statement-only words
    "CALL db.labels",
    "call SHOW_TABLES() return *",
]
REFUSED = [
    ("MATCH (s:`Symbol`) RETURN s /* a `quoted */ CREATE (n)", "CREATE"),
    ("MATCH (s:Symbol) WHERE s.text = 'a \\\\' CREATE (n)", "CREATE"),
    ("MATCH (s:Symbol {name: 'x'}) WITH s MERGE (t:Symbol {name: 'y'})", "MERGE"),
    ("MATCH (s) RETURN s; ", None),  # accepted: the `;` is the last token
    ("MATCH (s) RETURN s ; ; ", "one Cypher statement"),
    ("RETURN 1 UNION ALL CHECKPOINT", "CHECKPOINT"),
    ("MATCH (s) RETURN COUNT { SET s.x = 1 }", "SET"),
    ("MATCH (s) RETURN COUNT { RENAME USER a TO b }", "RENAME"),
    ("MATCH (s) RETURN COLLECT { STOP DATABASE neo4j }", "STOP"),
    ("CALL db.index.fulltext.queryNodes", None),
    ("CALL dbms.killQueries(['query-1'])", "dbms.killQueries"),
    ("CALL apoc.load.json('http://127.0.0.1:1/')", "apoc.load.json"),
    ("MATCH (s) RETURN s\u00a0CREATE (n)", "CREATE"),  # a no-break space separates like a space
    ("MATCH (s) RETURN s \ufeffCREATE (n)", "U+FEFF"),  # anything unknown is refused, never skipped
    ("MATCH (s) WHERE s.name = $`coupon code` RETURN s", "$coupon code"),
    ("MATCH (s) RETURN `unterminated", "unterminated"),
    ("MATCH (s) RETURN $", "parameter name"),
]


@pytest.mark.parametrize("query", ACCEPTED)
def test_accepted(query):
    assert vet(query, {}, write=False) == query


@pytest.mark.parametrize(("query", "named"), REFUSED)
def test_refused_or_not(query, named):
    if named is None:
        vet(query, {}, write=False)
        return
    with pytest.raises(QueryRefused) as refused:
        vet(query, {}, write=False)
    assert named in str(refused.value) and "\n" not in str(refused.value)


def test_a_trailing_semicolon_is_dropped_and_write_skips_only_the_allow_list():
    assert vet("MATCH (s) RETURN s; // done", {}, write=False) == "MATCH (s) RETURN s"
    assert vet("CREATE (:External {id: $id})", {"id": "stripe.Refund"}, write=True) == "CREATE (:External {id: $id})"
    with pytest.raises(QueryRefused, match="one Cypher statement"):
        vet("CREATE (n); CREATE (m)", {}, write=True)
    with pytest.raises(QueryRefused, match=r"\$id"):
        vet("CREATE (:External {id: $id})", {}, write=True)


def test_plan_query_drops_the_query_s_own_explain_or_profile():
    assert plan_query("MATCH (s) RETURN s") == "EXPLAIN MATCH (s) RETURN s"
    assert plan_query("profile MATCH (s) RETURN s") == "EXPLAIN MATCH (s) RETURN s"


def test_tokens_keep_strings_comments_and_names_apart():
    kinds = [(t.kind, t.text) for t in tokenize("MATCH (n:`a b`) // CREATE\nWHERE n.x = 'SET' RETURN $p")]
    assert ("name", "a b") in kinds and ("string", "'SET'") in kinds and ("param", "p") in kinds
    assert ("word", "CREATE") not in kinds


def test_the_docs_list_what_the_code_accepts_and_refuses():
    section = DOC.split("## What read-only Cypher accepts", 1)[1].split("\n## ", 1)[0]
    listed = section.split("**Listed procedures only.**", 1)[1].split("- **", 1)[0]
    assert {name.lower() for name in re.findall(r"`([\w.]+)`", listed)} - {"call"} == PROCEDURES
    refused = section.split("**Refused wherever they stand**", 1)[1].split("any other first word", 1)[0]
    assert set(_REFUSED) <= set(re.findall(r"`([A-Z]+)", refused))
