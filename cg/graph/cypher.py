"""Every Cypher statement both backends run, written once.

Kùzu and Neo4j share the schema and this subset of Cypher; what differs (schema DDL, the vector and
full-text index calls, Kùzu's typed vector columns) stays in each backend. Statements are built only
from the closed sets of labels, relationship types and properties below, never from data: every
value travels as a parameter. The few statements that take a label or a vector column are functions
that check their argument; ``cast`` is the backend's vector expression template (Kùzu stores vectors
as ``FLOAT[dim]`` arrays, Neo4j as plain lists: ``"CAST({} AS FLOAT[8])"`` or ``"{}"``).

Every node carries ``repo``, its repository's key, and every statement names ``$repo`` wherever it
names a node's ``id`` or ``path`` (``{repo: $repo, id: r.id}``): one Neo4j database holds many
repositories, the key (repo, id) is what is unique there, and matching on both lets Neo4j seek its
composite index. A statement that touched a node without ``$repo`` would reach another repository's
graph; ``tests/graph/test_store_conformance.py`` checks that each of them names it.
"""

from __future__ import annotations

from cg.graph.store import SUMMARY_FIELDS

NODE_LABELS = ("File", "Symbol", "Chunk", "External", "Doc", "Commit")  # Meta aside: what `stats` counts
REL_TYPES = (
    "DEFINES",
    "IMPORTS",
    "CALLS",
    "INHERITS",
    "DECORATES",
    "MENTIONS",
    "TOUCHES",
)  # PART_OF goes with its chunk
SEARCHABLE = ("Symbol", "Chunk", "Doc", "Commit")  # labels with a full-text index over search_text
# (label, property) of every full-text index: search_text on each searchable label, and the string
# literals of a definition as a field of their own (matched against the messages a question quotes).
TEXT_FIELDS = (*((label, "search_text") for label in SEARCHABLE), ("Symbol", "literals"))
VECTOR_PROPS = (
    ("Symbol", "embedding"),
    ("Symbol", "doc_embedding"),
    ("Chunk", "embedding"),
    ("Doc", "embedding"),
    ("Commit", "embedding"),
)
REL_COLUMNS = {  # the properties each relationship type written by write_edges carries
    "DEFINES": ("line",),
    "IMPORTS": ("line", "resolved_by"),
    "CALLS": ("line", "resolved_by", "confidence", "candidates"),
    "INHERITS": ("line", "resolved_by"),
    "DECORATES": ("line", "resolved_by"),
}
REL_PROPS = {rel: "{" + ", ".join(f"{p}: r.{p}" for p in props) + "}" for rel, props in REL_COLUMNS.items()}
EDGE_ENDS = ("File", "Symbol", "External")  # what write_edges connects
# The properties of every relationship type that may arrive at or leave a Symbol from another file's
# node: what a store re-creates when it writes a file's definitions anew (``recreate_edges``).
KEPT_EDGE_COLUMNS = {**REL_COLUMNS, "MENTIONS": (), "TOUCHES": ()}
EDGE_SOURCES = {  # the labels each relationship type leaves from (what `stats` counts)
    "DEFINES": ("File", "Symbol"),
    "IMPORTS": ("File",),
    "CALLS": ("Symbol",),
    "INHERITS": ("Symbol",),
    "DECORATES": ("Symbol",),
    "MENTIONS": ("Doc",),
    "TOUCHES": ("Commit",),
}
SUMMARY = ", ".join(f"n.{f} AS {f}" for f in SUMMARY_FIELDS)


def _each_row(var: str, label: str, field: str, var2: str, label2: str, field2: str) -> str:
    """``UNWIND $rows AS r`` and the two nodes whose ids are the row's ``field`` and ``field2`` (an edge's
    ends), matched one after the other through plain variables, with ``r`` carried along.

    Why not ``MATCH (a {repo: $repo, id: r.src}) MATCH (b {repo: $repo, id: r.dst})``: Kùzu 0.11.3
    plans two keys taken from fields of the unwound row as a cross product with a filter, every row
    against every node of the label, while it joins plain variables by hash. Measured on Django (45k
    definitions), 2,000 CALLS edges: 8.3 s that way, 0.11 s this way (0.58 s with only the second key
    through a variable). A statement that matches one node by a row's field keeps that form: setting
    2,000 vectors took 1.5 s as it is and 9 s through a variable (the rows, vectors and all, go into the
    join). Neo4j seeks its (repo, id) index either way."""
    return (
        f"UNWIND $rows AS r WITH r, r.{field} AS k1 MATCH ({var}:{label} {{repo: $repo, id: k1}})"
        f" WITH {var}, r, r.{field2} AS k2 MATCH ({var2}:{label2} {{repo: $repo, id: k2}})"
    )


# -- meta -----------------------------------------------------------------------------------------
GET_META = "MATCH (m:Meta {repo: $repo, key: $key}) RETURN m.value"
SET_META = "MERGE (m:Meta {repo: $repo, key: $key}) SET m.value = $value"

# -- one file's nodes (write_file) -----------------------------------------------------------------
UPSERT_FILE = (
    "MERGE (f:File {repo: $repo, id: $id}) SET f.path = $id, f.language = $language, f.kind = $kind,"
    " f.blob_sha = $blob_sha, f.loc = $loc, f.module = $module, f.committed_at = $committed_at"
)
# The same, one row per file: a full run on Neo4j writes its files' nodes in batches (neo4j_store.py).
UPSERT_FILES = (
    "UNWIND $rows AS r MERGE (f:File {repo: $repo, id: r.id}) SET f.path = r.id, f.language = r.language,"
    " f.kind = r.kind, f.blob_sha = r.blob_sha, f.loc = r.loc, f.module = r.module, f.committed_at = r.committed_at"
)
DELETE_STALE_SYMBOLS = "MATCH (s:Symbol {repo: $repo, path: $path}) WHERE NOT s.id IN $keep DETACH DELETE s"
# One file's outgoing edges (its own and its definitions'), by key: what every file write starts with. The
# IN-list forms below serve many files at once; for one file they scan where the key form looks up (the
# write stage measured about 10% slower on click with the IN form for every file).
#
# A DECORATES edge (decorator -> decorated) belongs to the file of the decorated definition: resolving
# that file's `@retry_on_decline` line is what finds it, although its source node may sit in another
# file. So a file's edges are the ones leaving its File and Symbols except DECORATES, plus the DECORATES
# edges arriving at its Symbols; rewriting the decorator's file leaves them alone (if the decorator
# itself goes, DETACH DELETE takes them, and its callers' files, the decorated ones among them, are
# resolved again: docs/freshness.md).
_SOURCE_OWNED = "DEFINES|CALLS|INHERITS"  # what leaves a Symbol and is its file's (DECORATES aside)
DELETE_EDGES_FROM_FILE = "MATCH (f:File {repo: $repo, id: $path})-[r]->() DELETE r"
DELETE_EDGES_FROM_SYMBOLS_OF = f"MATCH (s:Symbol {{repo: $repo, path: $path}})-[r:{_SOURCE_OWNED}]->() DELETE r"
DELETE_DECORATES_INTO = "MATCH ()-[r:DECORATES]->(s:Symbol {repo: $repo, path: $path}) DELETE r"
DELETE_EDGES_FROM_FILES = "MATCH (f:File {repo: $repo})-[r]->() WHERE f.id IN $paths DELETE r"
DELETE_EDGES_FROM_SYMBOLS = f"MATCH (s:Symbol {{repo: $repo}})-[r:{_SOURCE_OWNED}]->() WHERE s.path IN $paths DELETE r"
DELETE_DECORATES_INTO_FILES = "MATCH ()-[r:DECORATES]->(s:Symbol {repo: $repo}) WHERE s.path IN $paths DELETE r"
# A changed file's stored definitions and chunks on Kùzu, compared with the new version so that only
# what changed is written (KuzuStore._replace_file); the vectors' presence, not the vectors.
STORED_SYMBOL_COLUMNS = (
    "id", "name", "qualname", "kind", "signature", "docstring", "text", "header", "search_text", "literals",
    "parent_id", "language", "file_kind", "embedding", "doc_embedding", "start_line", "end_line", "blob_sha",
    "committed_at",
)  # fmt: skip
STORED_CHUNK_COLUMNS = ("id", "owner_id", "kind", "text", "search_text", "embedding", "start_line", "end_line")


def _stored(var: str, label: str, columns: tuple[str, ...]) -> str:
    """A file's rows of ``label`` with ``columns``, a vector column as whether it holds one."""
    returned = ", ".join(f"{var}.{c} IS NOT NULL" if (label, c) in VECTOR_PROPS else f"{var}.{c}" for c in columns)
    return f"MATCH ({var}:{label} {{repo: $repo, path: $path}}) RETURN {returned}"


STORED_SYMBOLS_OF = _stored("s", "Symbol", STORED_SYMBOL_COLUMNS)
STORED_CHUNKS_OF = _stored("c", "Chunk", STORED_CHUNK_COLUMNS)
DELETE_SYMBOLS_BY_ID = "MATCH (s:Symbol {repo: $repo}) WHERE s.id IN $ids DETACH DELETE s"
DELETE_CHUNKS_BY_ID = "MATCH (c:Chunk {repo: $repo}) WHERE c.id IN $ids DETACH DELETE c"
# Where a kept definition or chunk sits, and the file's sha and time it inherits: set in place (integers
# and one short string column cost Kùzu little to update, unlike its texts and vectors).
MOVE_SYMBOLS = (
    "UNWIND $rows AS r MATCH (s:Symbol {repo: $repo, id: r.id}) SET s.start_line = r.start_line,"
    " s.end_line = r.end_line, s.blob_sha = r.blob_sha, s.committed_at = r.committed_at"
)
MOVE_CHUNKS = (
    "UNWIND $rows AS r MATCH (c:Chunk {repo: $repo, id: r.id}) SET c.start_line = r.start_line, c.end_line = r.end_line"
)
# Chunks are upserted in place and only the stale ones deleted: deleting and re-creating every chunk of
# a file in one transaction crashes Kùzu 0.11.3 (a segfault, seen here).
DELETE_STALE_CHUNKS = "MATCH (c:Chunk {repo: $repo, path: $path}) WHERE NOT c.id IN $keep DETACH DELETE c"
DELETE_CHUNK_OWNERS = "MATCH (c:Chunk {repo: $repo, path: $path})-[p:PART_OF]->() DELETE p"
LINK_CHUNKS = f"{_each_row('c', 'Chunk', 'id', 's', 'Symbol', 'owner_id')} CREATE (c)-[:PART_OF]->(s)"
UPSERT_EXTERNALS = (
    "UNWIND $rows AS r MERGE (e:External {repo: $repo, id: r.id}) SET e.name = r.name, e.resolved = r.resolved"
)


def upsert_symbols(cast: str | None) -> str:
    """Symbols with their code vector (``cast`` None: symbols without one, a lambda); docstring vectors
    are set apart (SET_DOC_EMBEDDINGS) because a Kùzu list parameter mixing vectors and nulls does not
    cast."""
    embedding = _vector(cast, "r.embedding")
    return (
        "UNWIND $rows AS r MERGE (s:Symbol {repo: $repo, id: r.id}) SET s.name = r.name, s.qualname = r.qualname,"
        " s.kind = r.kind, s.path = r.path, s.start_line = r.start_line, s.end_line = r.end_line,"
        " s.signature = r.signature, s.docstring = r.docstring, s.text = r.text, s.header = r.header,"
        " s.search_text = r.search_text, s.literals = r.literals, s.parent_id = r.parent_id, s.language = r.language,"
        " s.file_kind = r.file_kind, s.blob_sha = r.blob_sha, s.committed_at = r.committed_at,"
        f" s.embedding = {embedding}, s.doc_embedding = NULL"
    )


def set_doc_embeddings(cast: str) -> str:
    return f"UNWIND $rows AS r MATCH (s:Symbol {{repo: $repo, id: r.id}}) SET s.doc_embedding = {cast.format('r.doc')}"


def set_vectors(label: str, prop: str, cast: str) -> str:
    """Vectors computed after their nodes were written (``cg index --embed later``, or a run that made
    the graph usable first): ``rows`` of {id, vec}."""
    label, prop = vector_prop(label, prop)
    return f"UNWIND $rows AS r MATCH (n:{label} {{repo: $repo, id: r.id}}) SET n.{prop} = {cast.format('r.vec')}"


def _vector(cast: str | None, value: str) -> str:
    """A vector parameter cast to the column's type, or NULL for nodes written before their vectors."""
    return cast.format(value) if cast is not None else "NULL"


def upsert_chunks(cast: str | None) -> str:
    return (
        "UNWIND $rows AS r MERGE (c:Chunk {repo: $repo, id: r.id}) SET c.owner_id = r.owner_id, c.kind = r.kind,"
        " c.path = r.path, c.start_line = r.start_line, c.end_line = r.end_line, c.text = r.text,"
        f" c.search_text = r.search_text, c.embedding = {_vector(cast, 'r.embedding')}"
    )


# -- edges, deletes ----------------------------------------------------------------------------------
def create_edges(rel: str, src: str, dst: str) -> str:
    if rel not in REL_PROPS or src not in EDGE_ENDS or dst not in EDGE_ENDS:
        raise ValueError(f"not a schema edge: {src}-[{rel}]->{dst}")
    return f"{_each_row('a', src, 'src', 'b', dst, 'dst')} CREATE (a)-[:{rel} {REL_PROPS[rel]}]->(b)"


def recreate_edges(rel: str, src: str, dst: str) -> str:
    """Edges as they were, between nodes written anew: ``rows`` of {src, dst} and the type's properties
    (``KEPT_EDGE_COLUMNS``)."""
    if rel not in KEPT_EDGE_COLUMNS or src not in NODE_LABELS or dst not in NODE_LABELS:
        raise ValueError(f"not a schema edge: {src}-[{rel}]->{dst}")
    props = ", ".join(f"{p}: r.{p}" for p in KEPT_EDGE_COLUMNS[rel])
    return (
        f"{_each_row('a', src, 'src', 'b', dst, 'dst')} CREATE (a)-[:{rel}{' {' + props + '}' if props else ''}]->(b)"
    )


DELETE_FILES = (  # chunks, symbols and sections first: they hang off the file by path, not by an edge
    "MATCH (c:Chunk {repo: $repo}) WHERE c.path IN $paths DETACH DELETE c",
    "MATCH (s:Symbol {repo: $repo}) WHERE s.path IN $paths DETACH DELETE s",
    "MATCH (d:Doc {repo: $repo}) WHERE d.path IN $paths DETACH DELETE d",
    "MATCH (f:File {repo: $repo}) WHERE f.id IN $paths DETACH DELETE f",
)
UNREFERENCED_EXTERNALS = "MATCH (e:External {repo: $repo}) WHERE NOT EXISTS { MATCH ()-[]->(e) } RETURN e.id"
DELETE_EXTERNALS = "MATCH (e:External {repo: $repo}) WHERE e.id IN $ids DELETE e"
FILE_SHAS = "MATCH (f:File {repo: $repo}) RETURN f.id, f.blob_sha"

# -- docs and history ----------------------------------------------------------------------------------
DELETE_STALE_DOCS = "MATCH (d:Doc {repo: $repo, path: $path}) WHERE NOT d.id IN $keep DETACH DELETE d"
DELETE_MENTIONS = "MATCH (d:Doc {repo: $repo})-[m:MENTIONS]->() WHERE d.path IN $paths DELETE m"
CREATE_MENTIONS = f"{_each_row('d', 'Doc', 'doc', 's', 'Symbol', 'symbol')} CREATE (d)-[:MENTIONS]->(s)"
DELETE_COMMITS = "MATCH (c:Commit {repo: $repo}) WHERE c.id IN $ids DETACH DELETE c"
COMMIT_IDS = "MATCH (c:Commit {repo: $repo}) RETURN c.id"
COMMITS_TOUCHING = (
    "MATCH (c:Commit)-[:TOUCHES]->(s:Symbol {repo: $repo}) WHERE s.id IN $ids"
    " RETURN s.id, c.id, c.short, c.author, c.committed_at, c.subject ORDER BY c.committed_at DESC, c.id"
)
DOCS_MENTIONING = (
    "MATCH (d:Doc)-[:MENTIONS]->(s:Symbol {repo: $repo}) WHERE s.id IN $ids RETURN s.id, d.id ORDER BY d.id"
)


def upsert_docs(cast: str | None) -> str:
    return (
        "UNWIND $rows AS r MERGE (d:Doc {repo: $repo, id: r.id}) SET d.path = r.path, d.title = r.title,"
        " d.heading = r.heading, d.start_line = r.start_line, d.end_line = r.end_line, d.text = r.text,"
        f" d.search_text = r.search_text, d.embedding = {_vector(cast, 'r.embedding')}"
    )


def upsert_commits(cast: str | None) -> str:
    return (
        "UNWIND $rows AS r MERGE (c:Commit {repo: $repo, id: r.id}) SET c.short = r.short, c.author = r.author,"
        " c.committed_at = r.committed_at, c.subject = r.subject, c.message = r.message, c.files = r.files,"
        f" c.search_text = r.search_text, c.embedding = {_vector(cast, 'r.embedding')}"
    )


def create_touches(label: str) -> str:
    if label not in ("File", "Symbol"):
        raise ValueError(f"a commit touches a File or a Symbol, not {label!r}")
    return f"{_each_row('c', 'Commit', 'c', 't', label, 't')} MERGE (c)-[:TOUCHES]->(t)"


# -- reads ---------------------------------------------------------------------------------------------
CHUNK_OWNERS = "MATCH (c:Chunk {repo: $repo}) WHERE c.id IN $ids RETURN c.id, c.owner_id"
SYMBOLS = f"MATCH (n:Symbol {{repo: $repo}}) WHERE n.id IN $ids RETURN {SUMMARY}"
SYMBOLS_WITH_TEXT = f"{SYMBOLS}, n.text AS text, n.header AS header"
FIND_SYMBOLS = (
    "MATCH (n:Symbol {repo: $repo}) WHERE n.id = $ref OR n.qualname = $ref OR n.name = $ref"
    f" OR n.qualname ENDS WITH $suffix RETURN {SUMMARY} ORDER BY n.qualname LIMIT $k"
)
CLASSES_NAMED = (
    f"MATCH (n:Symbol {{repo: $repo}}) WHERE n.name IN $names AND n.kind IN $kinds RETURN {SUMMARY}"
    " ORDER BY n.qualname, n.id"
)
TEST_FUNCTIONS = (
    "MATCH (n:Symbol {repo: $repo}) WHERE n.file_kind = 'test' AND n.kind IN ['function', 'method']"
    f" RETURN {SUMMARY} ORDER BY n.id"
)
SYMBOL_NAMES = "MATCH (n:Symbol {repo: $repo}) WHERE n.kind <> 'lambda' RETURN DISTINCT n.qualname"
CALLER_COUNTS = (
    "MATCH (a:Symbol)-[:CALLS]->(n:Symbol {repo: $repo}) WHERE n.id IN $ids RETURN n.id, count(DISTINCT a.id)"
)
BASES = "MATCH (a:Symbol {repo: $repo})-[:INHERITS]->(b:Symbol) WHERE a.id IN $ids RETURN DISTINCT a.id, b.id"
SUBCLASSES = "MATCH (a:Symbol)-[:INHERITS]->(b:Symbol {repo: $repo}) WHERE b.id IN $ids RETURN DISTINCT a.id, b.id"
DECORATORS = "MATCH (d:Symbol)-[r:DECORATES]->(s:Symbol {repo: $repo}) WHERE s.id IN $ids RETURN d.id, s.id, r.line"
MEMBERS = f"MATCH (c:Symbol {{repo: $repo}})-[:DEFINES]->(n:Symbol) WHERE c.id IN $ids RETURN {SUMMARY}"
IMPORTERS = (  # one statement per target label: Kùzu has no label predicate in WHERE
    "MATCH (f:File)-[r:IMPORTS]->(t:Symbol {repo: $repo}) WHERE t.id IN $ids RETURN f.id, t.id, r.line",
    "MATCH (f:File)-[r:IMPORTS]->(t:File {repo: $repo}) WHERE t.id IN $ids RETURN f.id, t.id, r.line",
)
SYMBOLS_AT = (
    "MATCH (n:Symbol {repo: $repo, path: $path}) WHERE n.start_line <= $line AND n.end_line >= $line"
    f" RETURN {SUMMARY} ORDER BY n.end_line - n.start_line, n.start_line DESC"
)
# The other end's columns; External ends have only id and name (the rest come back null). labels(n) is
# the label on Kùzu and a one-item list on Neo4j.
_CALL_COLUMNS = (
    " c.line, c.resolved_by, labels(n), n.name, n.qualname, n.kind, n.path, n.start_line, n.end_line, n.signature,"
    " n.file_kind"
)
CALLEES = "MATCH (a:Symbol {repo: $repo})-[c:CALLS]->(n) WHERE a.id IN $ids RETURN a.id, n.id," + _CALL_COLUMNS
CALLERS = "MATCH (n:Symbol)-[c:CALLS]->(a:Symbol {repo: $repo}) WHERE a.id IN $ids RETURN n.id, a.id," + _CALL_COLUMNS


# What a resident graph loads (cg/graph/resident.py): the reads by ids above, over every node at once.
# Kùzu only, where a database holds one repository, so bases and subclasses are one set of pairs.
RESIDENT_SUMMARIES = f"MATCH (n:Symbol {{repo: $repo}}) RETURN {SUMMARY}"
RESIDENT_CALLS = "MATCH (a:Symbol {repo: $repo})-[c:CALLS]->(n) RETURN a.id, n.id, c.line, c.resolved_by, labels(n)"
RESIDENT_EXTERNALS = "MATCH (n:External {repo: $repo}) RETURN n.id, n.name"
RESIDENT_INHERITS = "MATCH (a:Symbol {repo: $repo})-[:INHERITS]->(b:Symbol {repo: $repo}) RETURN DISTINCT a.id, b.id"
RESIDENT_MEMBERS = "MATCH (c:Symbol {repo: $repo})-[:DEFINES]->(n:Symbol) RETURN c.id, n.id"
RESIDENT_DECORATES = "MATCH (d:Symbol {repo: $repo})-[r:DECORATES]->(s:Symbol {repo: $repo}) RETURN d.id, s.id, r.line"
RESIDENT_MENTIONS = "MATCH (d:Doc {repo: $repo})-[:MENTIONS]->(s:Symbol {repo: $repo}) RETURN s.id, d.id"
RESIDENT_TOUCHED = "MATCH (:Commit {repo: $repo})-[:TOUCHES]->(s:Symbol {repo: $repo}) RETURN DISTINCT s.id"


def node_ids_and(label: str, prop: str) -> str:
    """Id and one property of nodes by id (search_text for BM25, a vector for exact re-scoring)."""
    return f"MATCH (n:{label} {{repo: $repo}}) WHERE n.id IN $ids RETURN n.id, n.{prop}"


def nodes_by_id(label: str) -> str:
    return f"MATCH (n:{label} {{repo: $repo}}) WHERE n.id IN $ids RETURN n"


def count_nodes(label: str) -> str:
    return f"MATCH (n:{label} {{repo: $repo}}) RETURN count(n)"


def count_edges(rel: str, src: str) -> str:
    """Edges of type ``rel`` leaving this repository's ``src`` nodes (an edge never leaves its repository;
    by label, so Neo4j seeks the repository index instead of scanning every repository's edges)."""
    if src not in EDGE_SOURCES.get(rel, ()):
        raise ValueError(f"no {rel} edges leave a {src}")
    return f"MATCH (n:{src} {{repo: $repo}})-[r:{rel}]->() RETURN count(r)"


def text_field(label: str, prop: str) -> tuple[str, str]:
    """``(label, prop)`` if it has a full-text index (TEXT_FIELDS); a ValueError otherwise."""
    if (label, prop) not in TEXT_FIELDS:
        raise ValueError(f"no full-text index on {label}.{prop}")
    return label, prop


def vector_prop(label: str, prop: str) -> tuple[str, str]:
    """``(label, prop)`` if it holds vectors; a ValueError otherwise."""
    if (label, prop) not in VECTOR_PROPS:
        raise ValueError(f"no vectors at {label}.{prop}")
    return label, prop
