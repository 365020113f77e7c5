"""Kùzu takes vectors as text (cg/graph/kuzu_store.py ``KuzuStore._params``): every float32 comes back
exactly, through the bulk load, the statement writes and the vectors set after their nodes."""

from __future__ import annotations

import numpy as np

from cg.graph.kuzu_store import KuzuStore, vector_text


def test_nine_digits_give_back_every_float32(tmp_path):
    import kuzu

    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((200, 16)).astype(np.float32)
    vectors[0, :4] = [np.float32(1e-38), np.float32(-3.4e38), np.float32(0.1), 0.0]  # extremes and a 0.1
    conn = kuzu.Connection(kuzu.Database(str(tmp_path / "db")))
    conn.execute("CREATE NODE TABLE V(id INT64 PRIMARY KEY, e FLOAT[16])")
    rows = [{"id": i, "e": vector_text(v)} for i, v in enumerate(vectors)]
    conn.execute("COPY V FROM (UNWIND $rows AS r RETURN r.id, CAST(r.e AS FLOAT[16]))", {"rows": rows})
    result = conn.execute("MATCH (v:V) RETURN v.id, v.e ORDER BY v.id")
    back = []
    while result.has_next():
        back.append(result.get_next()[1])
    assert np.array_equal(np.array(back, dtype=np.float32), vectors)


def test_vector_rows_go_as_text_only_where_the_statement_casts_them():
    store = KuzuStore.__new__(KuzuStore)  # _params reads nothing of the store but its key
    store.repo_key = "shop"
    vec = [0.25, -0.5]
    query = "UNWIND $rows AS r MATCH (n:Symbol {repo: $repo, id: r.id}) SET n.embedding = CAST(r.vec AS FLOAT[2])"
    params = store._params(query, {"rows": [{"id": "a", "vec": vec, "other": [1.0, 2.0]}]})
    assert params["rows"] == [{"id": "a", "vec": "[0.25,-0.5]", "other": [1.0, 2.0]}]
    assert params["repo"] == "shop"
    plain = "UNWIND $rows AS r MATCH (n:Symbol {id: r.id}) RETURN n.id"
    assert store._params(plain, {"rows": [{"id": "a", "vec": vec}]}) == {"rows": [{"id": "a", "vec": vec}]}
