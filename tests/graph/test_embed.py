"""The embedder: offline model resolution, the content-hash cache, and variants that never share vectors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cg.graph.embed import DEFAULT_MODEL, Embedder, EmbeddingCache, EmbeddingError, resolve_model_path


def test_default_model_resolves_inside_site_packages():
    path = Path(resolve_model_path(DEFAULT_MODEL))
    assert path.is_dir() and (path / "config.json").exists() and "site-packages" in path.parts


def test_variants_have_their_own_cache_keys(tmp_path: Path):
    assert Embedder(DEFAULT_MODEL, tmp_path).cache_key == DEFAULT_MODEL
    assert Embedder(DEFAULT_MODEL, tmp_path, precision="int8").cache_key == f"{DEFAULT_MODEL}|int8"
    assert Embedder(DEFAULT_MODEL, tmp_path, max_tokens=128).cache_key == f"{DEFAULT_MODEL}|128"
    with pytest.raises(EmbeddingError):
        Embedder(DEFAULT_MODEL, tmp_path, precision="fp8")


def test_cached_texts_are_never_embedded_again(tmp_path: Path):
    cache = EmbeddingCache(tmp_path / "embeddings.sqlite")
    vector = np.arange(4, dtype=np.float32)
    from cg.graph.embed import content_hash

    cache.put_many("some-model", {content_hash("def charge(): ..."): vector})
    embedder = Embedder("some-model", tmp_path)  # a model that does not exist: it must not be loaded
    out = embedder.embed(["def charge(): ...", "def charge(): ..."])
    assert np.array_equal(out[0], vector) and np.array_equal(out[1], vector)
    assert embedder.embedded == 0 and embedder.cached == 2


def test_a_missing_model_is_one_clear_error(tmp_path: Path):
    embedder = Embedder(str(tmp_path / "no-such-model"), tmp_path)
    with pytest.raises(EmbeddingError, match="cannot load embedding model"):
        embedder.embed(["def refund(): ..."])
