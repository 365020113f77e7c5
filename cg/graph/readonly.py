"""Which Cypher text may run without ``--write``: one statement of reading clauses, checked before
anything reaches a database.

The read-only handle (Kùzu's ``read_only=True`` database, Neo4j's READ_ACCESS session) is not enough
on its own: a read-only Kùzu database still runs ``LOAD EXTENSION`` (native code), ``LOAD FROM`` and
``COPY ... TO`` (any file), ``ATTACH`` and ``CHECKPOINT``, and a READ session on Neo4j still runs
``LOAD CSV FROM 'file:///...'`` or ``'http://...'``, ``TERMINATE TRANSACTIONS`` and
``db.clearQueryCaches()``. So the text is checked here first, by an allow-list: a query body starts
with a reading clause (MATCH, OPTIONAL MATCH, UNWIND, WITH, RETURN, CALL; EXPLAIN/PROFILE may lead
the statement); no word that starts a writing, file, extension, database or administration clause in
either dialect stands anywhere outside a string, a comment, a backtick-quoted name, a property, a
label or a map key; every ``CALL`` opens a subquery (``CALL {...}``, ``CALL (x) {...}``, whose bodies
are checked like the statement, as are ``EXISTS {...}``, ``COUNT {...}`` and ``COLLECT {...}``) or
names a procedure from PROCEDURES; and there is exactly one statement. A false refusal costs a user
a backtick; a false acceptance costs a file. Neo4j's own planner is the second gate
(cg/graph/neo4j_store.py runs ``EXPLAIN`` and wants query type ``r``).

Why a small tokenizer and not a parser from PyPI: the maintained ones speak one dialect. Tried on our
own queries, antlr4-cypher (the openCypher 9 grammar) rejects ``EXISTS {...}``, ``CALL (n) {...}``
and Kùzu's lambdas (``list_transform(nodes(p), n -> n.qualname)``, docs/cypher.md), and graphglot's
Neo4j dialect rejects the lambdas, ``LOAD FROM`` and ``LOAD CSV`` and reads ``a; b`` as one program;
cypher-guard validates Neo4j queries against a schema one writes for it, and libcypher-parser-python
was last released in 2019. Refusing by clause keywords only needs the lexical level right (strings
with escapes, comments, backtick names, parameters), which both dialects share and which this module
implements in full; anything it cannot lex is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cg.graph.store import StoreError


class QueryRefused(StoreError):
    """A Cypher text refused before it ran: empty, several statements, a parameter without a value,
    or (without ``--write``) anything but reading clauses. A StoreError, as every failed ``cypher()`` is."""


# The first word of a query body (the statement, a subquery, the part after UNION).
READING_CLAUSES = frozenset({"MATCH", "OPTIONAL", "UNWIND", "WITH", "RETURN", "CALL"})
PLAN_PREFIXES = frozenset({"EXPLAIN", "PROFILE"})

_WRITES = "writes the graph; run it with `cg cypher --write`"
_FILES = "reads or writes files, URLs or native extensions"
_REFUSED = {
    **dict.fromkeys(("CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "FOREACH", "INSERT"), _WRITES),
    **dict.fromkeys(("DROP", "ALTER", "RENAME"), "changes the schema or the database"),
    **dict.fromkeys(("LOAD", "COPY", "EXPORT", "IMPORT"), _FILES),
    **dict.fromkeys(("INSTALL", "UNINSTALL"), "installs an extension"),
    **dict.fromkeys(("ATTACH", "USE"), "opens another database"),
    **dict.fromkeys(("TERMINATE", "SHOW", "GRANT", "DENY", "REVOKE"), "administers the server"),
    **dict.fromkeys(("TRANSACTIONS", "PERIODIC"), "commits transactions of its own"),
}
"""Words that start a non-reading clause in Neo4j 5 or Kùzu 0.11 wherever a clause may stand; refused
anywhere outside strings, comments, quoted names, properties, labels and map keys. Statement-only
commands (BEGIN, COMMIT, ROLLBACK, CHECKPOINT, START/STOP DATABASE, ...) fail the first-word check, so
a variable may still be called ``commit`` or ``start``."""

PROCEDURES = frozenset(
    {
        # Neo4j: the indexes cg queries, and the schema
        "db.index.fulltext.querynodes",
        "db.index.fulltext.queryrelationships",
        "db.index.vector.querynodes",
        "db.index.vector.queryrelationships",
        "db.labels",
        "db.relationshiptypes",
        "db.propertykeys",
        "db.schema.visualization",
        "db.schema.nodetypeproperties",
        "db.schema.reltypeproperties",
        "db.info",
        "dbms.components",
        # Kùzu: the same, as table functions
        "query_vector_index",
        "show_tables",
        "table_info",
        "show_connection",
        "show_indexes",
        "db_version",
    }
)
"""Procedures a read-only query may CALL (compared case-insensitively; both backends' names, since a
name the backend does not know fails there anyway)."""

_BODY_OPENERS = frozenset({"CALL", "EXISTS", "COUNT", "COLLECT"})
_LINE_ENDS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # everything str.splitlines() splits on
_PUNCT = frozenset("()[]{},.;:$=<>!+-*/%^|&~?@#")


@dataclass(frozen=True)
class Token:
    kind: str  # "word", "name" (backtick-quoted), "param", "string", "number" or "punct"
    text: str  # a word or name as written (unquoted), a parameter's name, the punctuation itself
    pos: int


def tokenize(query: str) -> list[Token]:
    """The tokens of ``query`` without whitespace and comments; a text that does not lex is refused."""
    tokens: list[Token] = []
    i, n = 0, len(query)
    while i < n:
        ch = query[i]
        if ch.isspace():
            i += 1
        elif query.startswith("//", i):
            while i < n and query[i] not in _LINE_ENDS:
                i += 1
        elif query.startswith("/*", i):
            end = query.find("*/", i + 2)
            if end < 0:
                raise QueryRefused("unterminated /* comment in the Cypher query")
            i = end + 2
        elif ch in "'\"":
            start, i = i, _string_end(query, i)
            tokens.append(Token("string", query[start:i], start))
        elif ch == "`":
            start, name, i = i, *_quoted(query, i)
            tokens.append(Token("name", name, start))
        elif ch == "$":
            start, i = i, i + 1
            if i < n and query[i] == "`":
                name, i = _quoted(query, i)
            else:
                while i < n and _word_char(query[i]):
                    i += 1
                name = query[start + 1 : i]
            if not name:
                raise QueryRefused("a `$` without a parameter name in the Cypher query")
            tokens.append(Token("param", name, start))
        elif ch.isdigit():
            start = i
            while i < n and (_word_char(query[i]) or (query[i] == "." and i + 1 < n and query[i + 1].isdigit())):
                i += 1
            tokens.append(Token("number", query[start:i], start))
        elif _word_char(ch):
            start = i
            while i < n and _word_char(query[i]):
                i += 1
            tokens.append(Token("word", query[start:i], start))
        elif ch in _PUNCT:
            tokens.append(Token("punct", ch, i))
            i += 1
        else:
            raise QueryRefused(f"unexpected character U+{ord(ch):04X} in the Cypher query")
    return tokens


def _word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _string_end(query: str, i: int) -> int:
    quote, i = query[i], i + 1
    while i < len(query):
        if query[i] == "\\":
            i += 2
        elif query[i] == quote:
            return i + 1
        else:
            i += 1
    raise QueryRefused("unterminated string in the Cypher query")


def _quoted(query: str, i: int) -> tuple[str, int]:
    """A backtick-quoted name starting at ``i`` (a doubled backtick is one backtick) and where it ends."""
    parts: list[str] = []
    while i < len(query) and query[i] == "`":
        end = query.find("`", i + 1)
        if end < 0:
            raise QueryRefused("unterminated `quoted name` in the Cypher query")
        parts.append(query[i + 1 : end])
        i = end + 1
    return "`".join(parts), i


def vet(query: str, params: Mapping[str, Any], write: bool) -> str:
    """The text to run for ``query``, or QueryRefused in one line: the query is empty, holds more
    than one statement, uses a ``$parameter`` that ``params`` lacks, or (unless ``write``) is not
    read-only. A trailing ``;`` is dropped (two statements crash Kùzu 0.11; one with ``;`` is fine)."""
    tokens = tokenize(query)
    if not tokens:
        raise QueryRefused("empty Cypher query")
    semicolons = [t for t in tokens if t.kind == "punct" and t.text == ";"]
    if semicolons and (len(semicolons) > 1 or tokens[-1] is not semicolons[0]):
        raise QueryRefused("one Cypher statement at a time: `;` separates two")
    if semicolons:
        query, tokens = query[: semicolons[0].pos], tokens[:-1]
        if not tokens:
            raise QueryRefused("empty Cypher query")
    missing = sorted({t.text for t in tokens if t.kind == "param"} - {str(k) for k in params})
    if missing:
        names = ", ".join(f"${m}" for m in missing)
        raise QueryRefused(f"the query uses {names} but no value was given (--param {missing[0]}=VALUE)")
    if not write:
        _Checker(tokens).run()
    return query


def plan_query(query: str) -> str:
    """``EXPLAIN`` + a vetted query (a leading EXPLAIN or PROFILE of its own dropped): what the planner
    gate runs."""
    first = tokenize(query)
    if first[0].kind == "word" and first[0].text.upper() in PLAN_PREFIXES:
        query = query[first[1].pos :] if len(first) > 1 else ""
    return f"EXPLAIN {query}"


class _Checker:
    """One pass over a statement's tokens: brackets tracked to tell labels, map keys and subquery
    bodies apart; every bare word checked against the refused words, every body's first word
    against READING_CLAUSES, every CALL against PROCEDURES."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.stack: list[str] = []  # "(", "[", "map", "body", or "scope" for CALL's (x, y)
        self.body_next = False  # the next `{` opens a subquery body
        self.expect = "statement"  # what the next token must start: "statement", "body" or ""

    def run(self) -> None:
        i = 0
        while i < len(self.tokens):
            token = self.tokens[i]
            if self.expect:
                self._start(token)
            if token.kind == "punct":
                self._punct(token)
                i += 1
            elif token.kind == "word" and not self._exempt(i):
                i = self._word(i)
            else:
                self.body_next = False
                i += 1

    def _start(self, token: Token) -> None:
        word = token.text.upper() if token.kind == "word" else None
        if self.expect == "statement" and word in PLAN_PREFIXES:
            return  # EXPLAIN/PROFILE: the statement starts at the next token
        if self.expect == "body" and token.kind == "punct" and token.text in "(}":
            self.expect = ""  # EXISTS { (a)-->(b) }: a pattern body
            return
        if word not in READING_CLAUSES:
            shown = token.text if token.kind == "word" else repr(token.text)
            if word in _REFUSED:
                raise QueryRefused(f"read-only Cypher refuses {word}: it {_REFUSED[word]}")
            raise QueryRefused(
                f"read-only Cypher refuses {shown}: a query starts with MATCH, OPTIONAL MATCH, UNWIND, WITH,"
                " RETURN or CALL (anything else needs `cg cypher --write`)"
            )
        self.expect = ""

    def _punct(self, token: Token) -> None:
        text, opens_body = token.text, self.body_next
        self.body_next = False
        if text in "([":
            self.stack.append(text)
        elif text == "{":
            self.stack.append("body" if opens_body else "map")
            if opens_body:
                self.expect = "body"
        elif text in ")]}" and self.stack:
            closed = self.stack.pop()
            self.body_next = closed == "scope"  # CALL (x) { ... }

    def _exempt(self, i: int) -> bool:
        """Whether the word at ``i`` is a property, label, relationship type or map key rather than a
        keyword: after `.`, after `:` outside a map (or `&`/`!` in a pattern), `{key:`/`, key:` in a map."""
        before = self.tokens[i - 1] if i else None
        after = self.tokens[i + 1] if i + 1 < len(self.tokens) else None
        inner = self.stack[-1] if self.stack else ""
        if before is not None and before.kind == "punct":
            if before.text == ".":
                return True
            if before.text == ":" and inner != "map":
                return True
            if before.text in "&!" and inner in ("(", "["):  # label expressions (:A&!B)
                return True
            if inner == "map" and before.text in "{," and after is not None and after.text == ":":
                return True
        return False

    def _word(self, i: int) -> int:
        word = self.tokens[i].text.upper()
        if word in _REFUSED:
            raise QueryRefused(f"read-only Cypher refuses {word}: it {_REFUSED[word]}")
        if word == "CALL":
            return self._call(i)
        if word == "UNION":
            self.expect = "statement"
            following = self.tokens[i + 1] if i + 1 < len(self.tokens) else None
            if following is not None and following.kind == "word" and following.text.upper() in ("ALL", "DISTINCT"):
                return i + 2
            return i + 1
        self.body_next = word in _BODY_OPENERS
        return i + 1

    def _call(self, i: int) -> int:
        """CALL {...} / CALL (x) {...}: a subquery; CALL name(...): a listed procedure."""
        following = self.tokens[i + 1] if i + 1 < len(self.tokens) else None
        if following is not None and following.kind == "punct" and following.text == "{":
            self.body_next = True
            return i + 1
        if following is not None and following.kind == "punct" and following.text == "(":
            self.stack.append("scope")
            return i + 2
        j, parts = i + 1, []
        while j < len(self.tokens) and self.tokens[j].kind in ("word", "name"):
            parts.append(self.tokens[j].text)
            if not (j + 1 < len(self.tokens) and self.tokens[j + 1].text == "." and self.tokens[j + 1].kind == "punct"):
                break
            j += 2
        name = ".".join(parts)
        if not name:
            raise QueryRefused("read-only Cypher refuses this CALL: it names no procedure and opens no subquery")
        after = self.tokens[j + 1] if j + 1 < len(self.tokens) else None
        if after is not None and after.kind == "punct" and after.text == "=":
            raise QueryRefused(f"read-only Cypher refuses CALL {name}=...: it changes a database setting")
        if name.lower() not in PROCEDURES:
            raise QueryRefused(
                f"read-only Cypher refuses CALL {name}: not one of the read-only procedures in docs/cypher.md"
            )
        return j + 1
