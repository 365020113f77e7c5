#!/usr/bin/env python3
"""Smoke-check a running server: vector index, full-text index, read-access sessions.

Usage: PYTHON_WITH_NEO4J_DRIVER check_features.py   (after `neo4j-server start`)
Uses CG_NEO4J_PORT (7687), NEO4J_PASSWORD (cgtestpass), CG_NEO4J_AUTH=none.
Creates and then deletes :CgCheckChunk / :CgCheckDoc nodes and their indexes.
"""
import math
import os
import random
import sys

from neo4j import READ_ACCESS, GraphDatabase, exceptions

PORT = os.environ.get("CG_NEO4J_PORT", "7687")
AUTH = None if os.environ.get("CG_NEO4J_AUTH", "").lower() == "none" else (
    "neo4j", os.environ.get("NEO4J_PASSWORD", "cgtestpass"))
DIM = 384
failures = []


def check(name, ok, detail=""):
    print(f"[{'PASS' if ok else 'FAIL'}] {name}{': ' + str(detail) if detail else ''}")
    if not ok:
        failures.append(name)


def unit(v):
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def main():
    driver = GraphDatabase.driver(f"bolt://127.0.0.1:{PORT}", auth=AUTH)
    q = driver.execute_query
    info = q("CALL dbms.components() YIELD name, versions, edition "
             "RETURN name, versions[0] AS v, edition").records[0]
    print(f"server: {info['name']} {info['v']} {info['edition']}")

    # cleanup from an earlier interrupted run
    q("MATCH (n) WHERE n:CgCheckChunk OR n:CgCheckDoc DETACH DELETE n")
    q("DROP INDEX cg_check_vec IF EXISTS")
    q("DROP INDEX cg_check_ft IF EXISTS")

    # ---- vector index
    rng = random.Random(42)
    vecs = [unit([rng.gauss(0, 1) for _ in range(DIM)]) for _ in range(20)]
    q("UNWIND range(0, size($vecs) - 1) AS i CREATE (:CgCheckChunk {id: i, embedding: $vecs[i]})",
      vecs=vecs)
    q("CREATE VECTOR INDEX cg_check_vec IF NOT EXISTS FOR (c:CgCheckChunk) ON (c.embedding) "
      "OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}")
    q("CALL db.awaitIndexes(120)")
    idx = q("SHOW INDEXES YIELD name, type, state, indexProvider WHERE name = 'cg_check_vec' "
            "RETURN type, state, indexProvider").records[0]
    check("vector index online", idx["state"] == "ONLINE", dict(idx))
    probe = unit([x + 0.05 * rng.gauss(0, 1) for x in vecs[7]])  # near vector 7
    rows = q("CALL db.index.vector.queryNodes('cg_check_vec', 3, $q) YIELD node, score "
             "RETURN node.id AS id, score", q=probe).records
    check("vector queryNodes top hit", rows and rows[0]["id"] == 7,
          [(r["id"], round(r["score"], 4)) for r in rows])

    # ---- full-text index
    analyzers = [r["analyzer"] for r in
                 q("CALL db.index.fulltext.listAvailableAnalyzers() YIELD analyzer "
                   "RETURN analyzer ORDER BY analyzer").records]
    print("fulltext analyzers:", ", ".join(analyzers))
    q("UNWIND $docs AS d CREATE (:CgCheckDoc {id: d[0], title: d[1], body: d[2]})",
      docs=[[1, "Graph databases", "Neo4j stores connected data and runs Cypher queries."],
            [2, "Vector search", "Embeddings are compared with cosine similarity."],
            [3, "Cooking", "A recipe for running a kitchen."]])
    q("CREATE FULLTEXT INDEX cg_check_ft IF NOT EXISTS FOR (d:CgCheckDoc) ON EACH [d.title, d.body] "
      "OPTIONS {indexConfig: {`fulltext.analyzer`: 'english', "
      "`fulltext.eventually_consistent`: false}}")
    q("CALL db.awaitIndexes(120)")
    cfg = q("SHOW FULLTEXT INDEXES YIELD name, state, options WHERE name = 'cg_check_ft' "
            "RETURN state, options.indexConfig.`fulltext.analyzer` AS analyzer").records[0]
    check("fulltext index online with 'english' analyzer",
          cfg["state"] == "ONLINE" and cfg["analyzer"] == "english", dict(cfg))
    rows = q("CALL db.index.fulltext.queryNodes('cg_check_ft', 'database') YIELD node, score "
             "RETURN node.id AS id, score").records
    check("fulltext stemming ('database' finds 'databases')",
          [r["id"] for r in rows] == [1], [(r["id"], round(r["score"], 3)) for r in rows])
    for query, want in (("cosine AND similarity", [2]), ("kitchn~", [3]), ("title:graph", [1])):
        rows = q("CALL db.index.fulltext.queryNodes('cg_check_ft', $s) YIELD node "
                 "RETURN node.id AS id", s=query).records
        check(f"fulltext lucene query {query!r}", [r["id"] for r in rows] == want,
              [r["id"] for r in rows])

    # ---- read-access session must refuse writes
    for scheme in ("bolt", "neo4j"):
        with GraphDatabase.driver(f"{scheme}://127.0.0.1:{PORT}", auth=AUTH) as d:
            with d.session(default_access_mode=READ_ACCESS) as s:
                try:
                    s.run("CREATE (:CgCheckDoc {id: 99})").consume()
                    check(f"{scheme}:// READ_ACCESS session rejects CREATE (auto-commit)", False,
                          "write succeeded")
                except exceptions.Neo4jError as e:
                    check(f"{scheme}:// READ_ACCESS session rejects CREATE (auto-commit)", True,
                          f"{e.code}: {e.message}")
                try:
                    s.execute_read(lambda tx: tx.run("CREATE (:CgCheckDoc {id: 98})").consume())
                    check(f"{scheme}:// execute_read rejects CREATE", False, "write succeeded")
                except exceptions.Neo4jError as e:
                    check(f"{scheme}:// execute_read rejects CREATE", True, e.code)
                n = s.run("MATCH (d:CgCheckDoc) RETURN count(d) AS n").single()["n"]
                check(f"{scheme}:// READ_ACCESS session can read", n == 3, n)

    q("MATCH (n) WHERE n:CgCheckChunk OR n:CgCheckDoc DETACH DELETE n")
    q("DROP INDEX cg_check_vec IF EXISTS")
    q("DROP INDEX cg_check_ft IF EXISTS")
    driver.close()
    print(f"{len(failures)} failed" if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
