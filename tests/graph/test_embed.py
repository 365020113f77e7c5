"""The embedder: offline model resolution, the content-hash cache, and variants that never share vectors."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cg.embed import DEFAULT_MODEL, Embedder, EmbeddingCache, EmbeddingError, resolve_model_path
from tests.conftest import cg_command


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
    from cg.embed import content_hash

    cache.put_many("some-model", {content_hash("def charge(): ..."): vector})
    embedder = Embedder("some-model", tmp_path)  # a model that does not exist: it must not be loaded
    out = embedder.embed(["def charge(): ...", "def charge(): ..."])
    assert np.array_equal(out[0], vector) and np.array_equal(out[1], vector)
    assert embedder.embedded == 0 and embedder.cached == 2


def test_a_missing_model_is_one_clear_error(tmp_path: Path):
    embedder = Embedder(str(tmp_path / "no-such-model"), tmp_path)
    with pytest.raises(EmbeddingError, match="cannot load embedding model"):
        embedder.embed(["def refund(): ..."])


# --- the ONNX backend -------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


def _definitions() -> list[str]:
    """Realistic chunk texts: every definition of examples/shop and of cg's own embedder, with the
    path and scope header the chunker writes; a few are longer than the model's 256-token window."""
    import ast

    texts = []
    files = sorted((ROOT / "examples" / "shop" / "shop").rglob("*.py")) + [ROOT / "cg" / "embed" / "__init__.py"]
    for path in files:
        source = path.read_text("utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                rel = path.relative_to(ROOT)
                texts.append(f"# {rel} > {node.name}\n{ast.get_source_segment(source, node)}")
    return texts


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One private cache for the module: the ONNX exports are made once, here."""
    return tmp_path_factory.mktemp("cg-cache")


@pytest.fixture(scope="module")
def vectors(exports: Path) -> dict[str, np.ndarray]:
    texts = _definitions()
    return {
        "torch": Embedder(DEFAULT_MODEL, exports).encode(texts),
        "onnx": Embedder(DEFAULT_MODEL, exports, backend="onnx").encode(texts),
        "onnx-int8": Embedder(DEFAULT_MODEL, exports, backend="onnx", precision="int8").encode(texts),
        "onnx-int8-mixed": Embedder(DEFAULT_MODEL, exports, backend="onnx", precision="int8-mixed").encode(texts),
    }


def test_realistic_snippets_cover_short_and_truncated_texts(tmp_path: Path):
    counts = Embedder(DEFAULT_MODEL, tmp_path).token_counter()(_definitions())
    assert len(counts) > 60 and min(counts) < 40 and sum(c > 256 for c in counts) >= 3


def test_onnx_fp32_vectors_match_sentence_transformers(vectors: dict[str, np.ndarray]):
    cosines = (vectors["onnx"] * vectors["torch"]).sum(axis=1)
    assert cosines.min() >= 0.9999
    assert np.allclose(np.linalg.norm(vectors["onnx"], axis=1), 1.0, atol=1e-5)


def test_onnx_int8_vectors_stay_close(vectors: dict[str, np.ndarray]):
    # measured on these texts: mean 0.994, min 0.991 on an Intel Xeon host; mean 0.992, min 0.9846 on
    # an AMD EPYC one (ONNX Runtime's int8 kernels differ by CPU); per-tensor int8, torch's or ONNX's:
    # mean 0.91-0.93
    cosines = (vectors["onnx-int8"] * vectors["torch"]).sum(axis=1)
    assert cosines.mean() >= 0.99 and cosines.min() >= 0.98


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_onnx_vectors_do_not_depend_on_batch_composition(exports: Path, precision: str):
    texts = _definitions()[:40]
    embedder = Embedder(DEFAULT_MODEL, exports, backend="onnx", precision=precision, batch_size=16)
    together = embedder.encode(texts)
    reversed_order = embedder.encode(texts[::-1])[::-1]
    alone = np.vstack([embedder.encode([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-5) and np.allclose(together, reversed_order, atol=1e-5)


def test_onnx_batches_with_padding_match_single_runs(exports: Path):
    """The exported graph honours the attention mask (texts of different lengths in one run)."""
    from cg.embed.onnx import OnnxEncoder

    encoder = Embedder(DEFAULT_MODEL, exports, backend="onnx")._onnx_encoder()
    assert isinstance(encoder, OnnxEncoder)
    texts = ["def pay(invoice): ...", "class Coupon:\n    code: str\n    percent_off: int\n    def valid(self): ..."]
    encodings = encoder.tokenizer.encode_batch(texts)
    width = max(len(e.ids) for e in encodings)
    ids = np.zeros((2, width), np.int64)
    mask = np.zeros((2, width), np.int64)
    for row, e in enumerate(encodings):
        ids[row, : len(e.ids)], mask[row, : len(e.ids)] = e.ids, 1
    hidden = encoder.session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": 0 * ids})[0]
    padded = encoder._pool(hidden, mask)
    assert np.allclose(padded, encoder.encode(texts), atol=1e-5)


def test_onnx_variants_have_their_own_cache_keys(tmp_path: Path):
    keys = {
        Embedder(DEFAULT_MODEL, tmp_path).cache_key,
        Embedder(DEFAULT_MODEL, tmp_path, backend="onnx").cache_key,
        Embedder(DEFAULT_MODEL, tmp_path, backend="onnx", precision="int8").cache_key,
        Embedder(DEFAULT_MODEL, tmp_path, backend="onnx", max_tokens=128).cache_key,
        Embedder(DEFAULT_MODEL, tmp_path, precision="int8").cache_key,
    }
    assert len(keys) == 5 and f"{DEFAULT_MODEL}|onnx|int8" in keys
    with pytest.raises(EmbeddingError, match="not torch or onnx"):
        Embedder(DEFAULT_MODEL, tmp_path, backend="tensorflow")


def test_token_counts_are_the_transformers_tokenizers(tmp_path: Path):
    from transformers import AutoTokenizer

    texts = [*_definitions(), "", "naïve café – 中文 🎉\r\n\tTabs", "x" * 3000, "HandleInvoicePaid handle_invoice_paid"]
    slow = AutoTokenizer.from_pretrained(resolve_model_path(DEFAULT_MODEL))
    expected = [len(ids) for ids in slow(texts, add_special_tokens=False, truncation=False)["input_ids"]]
    counter = Embedder(DEFAULT_MODEL, tmp_path).token_counter()
    assert counter(texts) == expected
    assert counter([*texts, *texts]) == expected * 2  # the short ones now from the memo, in place


# Text a bound on BERT's count could get wrong: what its normalizer drops (control characters,
# combining marks), what it cuts that Python does not (Unicode punctuation, ideographic spaces, CJK),
# what Python takes for whitespace that BERT drops, accents inside identifiers, over-long words.
TRICKY = [
    "abc\x1cxyz def\x1fghi",
    "\u0301\u0301 \u200b\u200b a\u00a0b c\u3000d",
    "naïve_café = İstanbul.ĳssel(ǅemal)",
    "«quoted»—dash…ellipsis a→b ≤ c",
    "中文字符 mixed中文with latin 🎉🎉 x🎉y",
    "x" * 300 + " " + "y_" * 200,
    "\ufffd\ufffd replacement \x00 nul \t\ttabs\r\n",
]


def test_the_lower_bound_on_bert_counts_never_passes_the_count(tmp_path: Path):
    """``fit_budget`` skips counting a head whose bound is over budget (cg/ingest/chunk.py), so the
    bound must never be above the real count, and on code it must be close to it to be of use."""
    counter = Embedder(DEFAULT_MODEL, tmp_path).token_counter()
    texts = [*_definitions(), *TRICKY]
    counts = counter(texts)
    bounds = [counter.lower_bound(t) for t in texts]
    assert all(b <= n for b, n in zip(bounds, counts, strict=True)), [
        (t[:40], b, n) for t, b, n in zip(texts, bounds, counts, strict=True) if b > n
    ]
    code = [(b, n) for b, n in zip(bounds, counts, strict=True)][: len(_definitions())]
    assert sum(b for b, _ in code) >= 0.7 * sum(n for _, n in code)


def test_the_export_is_announced_once_and_then_cached(tmp_path: Path, exports: Path, capsys):
    Embedder(DEFAULT_MODEL, exports, backend="onnx").encode(["def pay(): ..."])  # exported by now
    capsys.readouterr()
    Embedder(DEFAULT_MODEL, exports, backend="onnx").encode(["def pay(): ..."])
    assert capsys.readouterr().err == ""
    fresh = tmp_path / "fresh"
    shutil.copytree(exports / "onnx", fresh / "onnx")
    for exported in (fresh / "onnx").rglob("model-int8.onnx"):
        exported.unlink()
    Embedder(DEFAULT_MODEL, fresh, backend="onnx", precision="int8").encode(["def pay(): ..."])
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "exporting all-MiniLM-L6-v2 to ONNX (int8)" in err


def test_the_onnx_path_never_imports_torch(exports: Path):
    Embedder(DEFAULT_MODEL, exports, backend="onnx", precision="int8").encode(["warm"])  # export made
    script = (
        "import sys\nfrom pathlib import Path\nfrom cg.embed import Embedder\n"
        f"e = Embedder('{DEFAULT_MODEL}', Path(sys.argv[1]), backend='onnx', precision='int8')\n"
        "e.token_counter()(['def pay(): ...'])\nassert e.encode(['def pay(): ...']).shape == (1, 384)\n"
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", script, str(exports)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_onnx_problems_are_one_clear_line(tmp_path: Path):
    with pytest.raises(EmbeddingError, match="needs a local model folder"):
        Embedder("some/hub-model", tmp_path, backend="onnx").embed(["def pay(): ..."])
    weightless = tmp_path / "weightless"
    shutil.copytree(resolve_model_path(DEFAULT_MODEL), weightless, ignore=shutil.ignore_patterns("*.safetensors"))
    with pytest.raises(EmbeddingError, match="^cannot export .* to ONNX: [^\n]*$"):
        Embedder(str(weightless), tmp_path, backend="onnx").embed(["def pay(): ..."])
    dense = tmp_path / "dense"
    shutil.copytree(weightless, dense)
    modules = json.loads((dense / "modules.json").read_text())
    (dense / "modules.json").write_text(json.dumps([*modules, {"type": "sentence_transformers.models.Dense"}]))
    with pytest.raises(EmbeddingError, match="runs Transformer, Pooling and Normalize only"):
        Embedder(str(dense), tmp_path, backend="onnx").embed(["def pay(): ..."])


def test_onnx_int8_mixed_keeps_closer_to_fp32_than_full_int8(vectors: dict[str, np.ndarray]):
    mixed = (vectors["onnx-int8-mixed"] * vectors["torch"]).sum(axis=1)
    full = (vectors["onnx-int8"] * vectors["torch"]).sum(axis=1)
    # min 0.988 on an AMD EPYC host, 0.99+ on an Intel Xeon one (the int8 kernels differ by CPU)
    assert mixed.mean() > full.mean() and mixed.min() >= 0.985


def test_int8_mixed_is_onnx_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from cg.config import ConfigError, load_settings
    from cg.embed import EmbeddingError

    (tmp_path / "cg.toml").write_text('embed_backend = "torch"\nembed_precision = "int8-mixed"\n')
    with pytest.raises(ConfigError, match="needs embed_backend = 'onnx'"):
        load_settings(tmp_path)
    monkeypatch.setenv("CG_EMBED_BACKEND", "onnx")
    assert load_settings(tmp_path).embed_precision == "int8-mixed"
    with pytest.raises(EmbeddingError, match="needs embed_backend"):
        Embedder(DEFAULT_MODEL, tmp_path, precision="int8-mixed")


def test_the_default_embedding_is_onnx_int8_and_torch_stays_an_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from cg.config import ConfigError, load_settings
    from cg.embed import embedder_for

    settings = load_settings(tmp_path)
    assert (settings.embed_backend, settings.embed_precision) == ("onnx", "int8")
    assert embedder_for(settings).cache_key == f"{DEFAULT_MODEL}|onnx|int8"
    # naming the plain sentence-transformers path gives its own default precision, fp32
    (tmp_path / "cg.toml").write_text('embed_backend = "torch"\n')
    torch_settings = load_settings(tmp_path)
    assert (torch_settings.embed_backend, torch_settings.embed_precision) == ("torch", "fp32")
    assert embedder_for(torch_settings).cache_key == DEFAULT_MODEL
    (tmp_path / "cg.toml").write_text('embed_precision = "int4"\n')
    with pytest.raises(ConfigError, match="unknown embed_precision 'int4'"):
        load_settings(tmp_path)
    monkeypatch.setenv("CG_EMBED_BACKEND", "jax")
    with pytest.raises(ConfigError, match="unknown embed_backend 'jax'"):
        load_settings(tmp_path)


def test_fusion_is_a_checked_setting(tmp_path: Path):
    from cg.config import ConfigError, load_settings

    assert load_settings(tmp_path).fusion == "learned"  # the default (docs/architecture.md "Learned ranking")
    (tmp_path / "cg.toml").write_text('fusion = "rrf"\n')
    assert load_settings(tmp_path).fusion == "rrf"
    (tmp_path / "cg.toml").write_text('fusion = "borda"\n')
    with pytest.raises(ConfigError, match="unknown fusion 'borda'"):
        load_settings(tmp_path)


# --- the torch-free graph (cg/embed/bert_onnx.py) -------------------------------------------------


def _padded(encoder, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """One padded batch of ``texts`` as the tokenizer truncates them: ids and mask, zeros after each text."""
    encodings = encoder.tokenizer.encode_batch(texts)
    width = max(len(e.ids) for e in encodings)
    ids, mask = np.zeros((len(texts), width), np.int64), np.zeros((len(texts), width), np.int64)
    for row, e in enumerate(encodings):
        ids[row, : len(e.ids)], mask[row, : len(e.ids)] = e.ids, 1
    return ids, mask


def test_the_default_export_is_the_torch_free_graph(exports: Path):
    import onnx

    encoder = Embedder(DEFAULT_MODEL, exports, backend="onnx")._onnx_encoder()
    folder = next((exports / "onnx").glob("*-v*"))
    assert onnx.load(str(folder / "model.onnx"), load_external_data=False).producer_name == "cg"
    assert {i.name for i in encoder.session.get_inputs()} == {"input_ids", "attention_mask", "token_type_ids"}
    assert [o.name for o in encoder.session.get_outputs()] == ["last_hidden_state"]


def test_torch_free_graph_matches_sentence_transformers_in_padded_batches(
    exports: Path, vectors: dict[str, np.ndarray]
):
    """Whole padded batches (short texts beside ones truncated at 256 tokens) through the torch-free fp32
    graph, pooled, against sentence-transformers' vectors of the same texts."""
    texts = _definitions()
    encoder = Embedder(DEFAULT_MODEL, exports, backend="onnx")._onnx_encoder()
    lengths = [len(e.ids) for e in encoder.tokenizer.encode_batch(texts)]
    assert max(lengths) == encoder.window == 256 and min(lengths) < 40
    pooled = []
    for start in range(0, len(texts), 16):  # source order: every batch mixes lengths, so it is padded
        ids, mask = _padded(encoder, texts[start : start + 16])
        hidden = encoder.session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": 0 * ids})[0]
        pooled.append(encoder._pool(hidden, mask))
    cosines = (np.vstack(pooled) * vectors["torch"]).sum(axis=1)
    assert cosines.min() >= 0.9999


def test_torch_free_graph_matches_the_torch_export(exports: Path, tmp_path: Path):
    """The hidden states of the written graph and of torch.onnx.export agree on a padded batch."""
    import onnxruntime as ort

    from cg.embed.onnx import export_with_torch

    encoder = Embedder(DEFAULT_MODEL, exports, backend="onnx")._onnx_encoder()
    export_with_torch(Path(resolve_model_path(DEFAULT_MODEL)), tmp_path / "traced.onnx")
    traced = ort.InferenceSession(str(tmp_path / "traced.onnx"), providers=["CPUExecutionProvider"])
    ids, mask = _padded(encoder, _definitions()[:12])
    feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": 0 * ids}
    ours, theirs = encoder.session.run(None, feed)[0], traced.run(None, feed)[0]
    real = mask.astype(bool)  # padded positions carry no meaning in either graph
    assert np.abs(ours[real] - theirs[real]).max() < 1e-3


def _tiny_bert(folder: Path, act: str) -> None:
    """A small random BERT (2 layers, 4 heads, hidden 32) saved as safetensors with its config.json."""
    from safetensors.numpy import save_file

    rng = np.random.default_rng(7)
    hidden, inner, layers = 32, 64, 2
    shapes = {
        "embeddings.word_embeddings.weight": (100, hidden),
        "embeddings.position_embeddings.weight": (40, hidden),
        "embeddings.token_type_embeddings.weight": (2, hidden),
        "embeddings.LayerNorm.weight": (hidden,),
        "embeddings.LayerNorm.bias": (hidden,),
    }
    for i in range(layers):
        for name in ("query", "key", "value"):
            shapes |= {f"encoder.layer.{i}.attention.self.{name}.weight": (hidden, hidden)}
            shapes |= {f"encoder.layer.{i}.attention.self.{name}.bias": (hidden,)}
        shapes |= {
            f"encoder.layer.{i}.attention.output.dense.weight": (hidden, hidden),
            f"encoder.layer.{i}.attention.output.dense.bias": (hidden,),
            f"encoder.layer.{i}.attention.output.LayerNorm.weight": (hidden,),
            f"encoder.layer.{i}.attention.output.LayerNorm.bias": (hidden,),
            f"encoder.layer.{i}.intermediate.dense.weight": (inner, hidden),
            f"encoder.layer.{i}.intermediate.dense.bias": (inner,),
            f"encoder.layer.{i}.output.dense.weight": (hidden, inner),
            f"encoder.layer.{i}.output.dense.bias": (hidden,),
            f"encoder.layer.{i}.output.LayerNorm.weight": (hidden,),
            f"encoder.layer.{i}.output.LayerNorm.bias": (hidden,),
        }
    folder.mkdir()
    save_file(
        {k: rng.normal(0, 0.3, v).astype(np.float32) for k, v in shapes.items()}, str(folder / "model.safetensors")
    )
    config = {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_size": hidden,
        "intermediate_size": inner,
        "num_attention_heads": 4,
        "num_hidden_layers": layers,
        "max_position_embeddings": 40,
        "type_vocab_size": 2,
        "vocab_size": 100,
        "hidden_act": act,
        "layer_norm_eps": 1e-7,
    }
    (folder / "config.json").write_text(json.dumps(config))


@pytest.mark.parametrize("act", ["gelu", "gelu_new", "relu"])
def test_torch_free_graph_follows_the_bert_config(tmp_path: Path, act: str):
    """Another BERT's sizes, epsilon and activation, read from its config.json: the written graph gives
    transformers' BertModel hidden states on a padded batch with both token types."""
    import onnxruntime as ort
    import torch
    from transformers import BertModel

    from cg.embed.bert_onnx import build_bert_graph

    _tiny_bert(tmp_path / "bert", act)
    build_bert_graph(tmp_path / "bert", tmp_path / "bert.onnx")
    rng = np.random.default_rng(3)
    ids = rng.integers(1, 100, (3, 9)).astype(np.int64)
    mask = np.ones_like(ids)
    mask[1, 5:], mask[2, 2:] = 0, 0
    types = np.zeros_like(ids)
    types[:, 4:] = 1
    session = ort.InferenceSession(str(tmp_path / "bert.onnx"), providers=["CPUExecutionProvider"])
    ours = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
    model = BertModel.from_pretrained(str(tmp_path / "bert"), attn_implementation="eager", add_pooling_layer=False)
    with torch.no_grad():
        theirs = model.eval()(
            input_ids=torch.from_numpy(ids),
            attention_mask=torch.from_numpy(mask),
            token_type_ids=torch.from_numpy(types),
        ).last_hidden_state.numpy()
    real = mask.astype(bool)
    assert ours.shape == theirs.shape == (3, 9, 32)
    assert np.abs(ours[real] - theirs[real]).max() < 1e-4


def test_the_int8_recipe_applies_to_the_torch_free_graph(exports: Path):
    """cg's per-channel dynamic int8 recipe quantizes every projection of the written graph, and the
    int8-mixed recipe finds its six FFN output projections by the torch export's node names."""
    import onnx

    from cg.embed.onnx import ffn_output_nodes

    Embedder(DEFAULT_MODEL, exports, backend="onnx", precision="int8").encode(["def refund(): ..."])
    folder = next((exports / "onnx").glob("*-v*"))
    ops = [n.op_type for n in onnx.load(str(folder / "model-int8.onnx")).graph.node]
    assert ops.count("MatMulInteger") == 6 * 6 and "MatMul" in ops  # 6 projections a layer; Q K^T, P V stay
    assert len(ffn_output_nodes(folder / "model.onnx")) == 6


def test_other_architectures_are_one_line_without_torch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import cg.embed.onnx as onnx_backend

    roberta = tmp_path / "roberta"
    shutil.copytree(resolve_model_path(DEFAULT_MODEL), roberta)
    config = json.loads((roberta / "config.json").read_text())
    (roberta / "config.json").write_text(json.dumps({**config, "model_type": "roberta"}))
    monkeypatch.setattr(onnx_backend, "torch_installed", lambda: False)
    with pytest.raises(EmbeddingError) as caught:
        Embedder(str(roberta), tmp_path, backend="onnx").embed(["def pay(): ..."])
    message = str(caught.value)
    assert "\n" not in message and "model_type 'roberta' is not bert" in message and "cg[torch]" in message


def test_the_graph_is_built_where_torch_cannot_be_imported(tmp_path: Path):
    """The whole default path, export included, in a process where importing torch, transformers or
    sentence_transformers fails, as in the default install (scripts/check-default-install installs one)."""
    script = (
        "import sys\nfrom pathlib import Path\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('torch', 'transformers', 'sentence_transformers'):\n"
        "            raise ImportError(name + ' is blocked')\n"
        "sys.meta_path.insert(0, Block())\n"
        "from cg.embed import Embedder\n"
        f"e = Embedder('{DEFAULT_MODEL}', Path(sys.argv[1]), backend='onnx', precision='int8')\n"
        "print(e.encode(['def refund(invoice): ...']).shape)\n"
    )
    result = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "(1, 384)" and "exporting all-MiniLM-L6-v2 to ONNX (int8)" in result.stderr


def test_the_torch_backend_without_the_extra_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import fails as if not installed
    with pytest.raises(
        EmbeddingError, match=r"^embed_backend 'torch' needs the torch extra \(pip install 'cg\[torch\]'\)"
    ):
        Embedder(DEFAULT_MODEL, tmp_path).embed(["def pay(): ..."])


def _filled_cache(path: Path, count: int = 400) -> dict[str, np.ndarray]:
    vectors = {f"{i:064x}": np.full(384, i, np.float32) for i in range(count)}
    cache = EmbeddingCache(path)
    cache.put_many("minilm", vectors)
    cache.close()
    return vectors


@pytest.mark.parametrize("damage", ["truncated", "overwritten"])
def test_a_damaged_cache_is_named_moved_aside_and_rebuilt(tmp_path: Path, damage: str, capsys) -> None:
    path = tmp_path / "embeddings.sqlite"
    vectors = _filled_cache(path)
    size = path.stat().st_size
    if damage == "truncated":
        with path.open("r+b") as handle:
            handle.truncate(size // 3)
    else:
        path.write_bytes(b"invoices and coupons, not SQLite " * 200)
    cache = EmbeddingCache(path)
    assert cache.get_many("minilm", list(vectors)) == {}  # nothing trusted from the damaged file
    cache.put_many("minilm", {"a" * 64: np.ones(384, np.float32)})
    assert list(cache.get_many("minilm", ["a" * 64])) == ["a" * 64]
    cache.close()
    warning = capsys.readouterr().err.strip().splitlines()
    assert len(warning) == 1 and warning[0].startswith(f"cg: warning: the embedding cache {path} is damaged (")
    assert cache.moved_aside is not None and cache.moved_aside.name in warning[0]
    assert cache.moved_aside.exists() and cache.moved_aside.name.startswith("embeddings.sqlite.corrupt-")
    assert EmbeddingCache(path).get_many("minilm", ["a" * 64])  # the new file is a sound cache


def test_a_cache_that_is_only_busy_is_not_moved_aside(tmp_path: Path) -> None:
    path = tmp_path / "embeddings.sqlite"
    _filled_cache(path, 3)
    holder = sqlite3.connect(str(path), timeout=0)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        cache = EmbeddingCache(path)
        cache._db = sqlite3.connect(str(path), timeout=0)  # no 30 s wait in a test
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            cache.put_many("minilm", {"b" * 64: np.ones(384, np.float32)})
        assert cache.moved_aside is None and path.exists()
    finally:
        holder.rollback()
        holder.close()


def test_index_and_search_go_on_over_a_truncated_cache(tmp_path: Path) -> None:
    repo = tmp_path / "shop"
    (repo / "shop").mkdir(parents=True)
    (repo / "shop" / "coupons.py").write_text(
        '"""Coupons."""\n\n\ndef apply_coupon(total_cents: int, percent: int) -> int:\n'
        '    """Take a percentage coupon off an invoice total."""\n    return total_cents * (100 - percent) // 100\n'
    )
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    shared = Path.home() / ".cache" / "cg" / "onnx"
    if shared.is_dir():  # the exported model: reused, so this test does not export it again
        (cache_dir / "onnx").symlink_to(shared, target_is_directory=True)
    env = {"CG_CACHE_DIR": str(cache_dir)}
    cg_command("index", str(repo), env=env)
    cache = cache_dir / "embeddings.sqlite"
    with sqlite3.connect(str(cache)) as db:  # fold the WAL in, so that truncating the file loses pages
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    with cache.open("r+b") as handle:
        handle.truncate(cache.stat().st_size // 2)
    result = cg_command("index", str(repo), "--full", env=env)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "embedding cache" in lines[0] and "moved aside to embeddings.sqlite.corrupt-" in lines[0]
    assert re.search(r"embeddings: 3 computed on (cpu|cuda), 0 from cache", result.stdout)
    assert [p.name for p in cache_dir.glob("embeddings.sqlite.corrupt-*")] != []
    search = cg_command("search", "coupon percentage", "--repo", str(repo), env=env)
    assert "apply_coupon" in search.stdout and search.stderr == ""


def test_the_width_is_read_from_the_model_folder_without_loading_the_model(tmp_path: Path):
    """A run that defers its vectors (`cg index --embed later`) asks the width of the vector columns
    before anything is embedded: the model folder says it, and the model stays unloaded."""
    embedder = Embedder(DEFAULT_MODEL, tmp_path / "cache", backend="onnx", precision="int8")
    assert embedder.dimension == 384
    assert embedder._onnx is None and embedder._model is None
    assert embedder.embed(["def retry_failed_payment(invoice): ..."]).shape == (1, 384)

    folder = tmp_path / "with-dense"  # a Dense layer changes the width: the folder no longer says it
    shutil.copytree(resolve_model_path(DEFAULT_MODEL), folder)
    modules = json.loads((folder / "modules.json").read_text())
    modules.insert(2, {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"})
    (folder / "modules.json").write_text(json.dumps(modules))
    from cg.embed import pooled_dimension

    assert pooled_dimension(folder) == 0 and pooled_dimension(Path(resolve_model_path(DEFAULT_MODEL))) == 384


# --- where the model runs (embed_device) ----------------------------------------------------------


def test_onnx_providers_put_cuda_first_only_when_the_build_has_it():
    from cg.embed.onnx import OnnxError, onnx_providers

    gpu_build = ["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"]
    assert onnx_providers("auto", gpu_build) == ["CUDAExecutionProvider", "CPUExecutionProvider"]
    assert onnx_providers("cuda", gpu_build) == ["CUDAExecutionProvider", "CPUExecutionProvider"]
    assert onnx_providers("cpu", gpu_build) == ["CPUExecutionProvider"]
    assert onnx_providers("auto", ["CPUExecutionProvider"]) == ["CPUExecutionProvider"]
    with pytest.raises(OnnxError, match="onnxruntime-gpu"):
        onnx_providers("cuda", ["CPUExecutionProvider"])


def test_torch_device_follows_what_torch_sees(monkeypatch: pytest.MonkeyPatch):
    import torch

    from cg.embed import torch_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert torch_device("auto", "fp32") == "cuda" and torch_device("cuda", "fp32") == "cuda"
    assert torch_device("cpu", "fp32") == "cpu"
    assert torch_device("auto", "int8") == "cpu"  # dynamic quantization is a CPU kernel
    with pytest.raises(EmbeddingError, match="CPU only"):
        torch_device("cuda", "int8")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert torch_device("auto", "fp32") == "cpu"
    with pytest.raises(EmbeddingError, match="no CUDA device"):
        torch_device("cuda", "fp32")


def test_auto_runs_on_the_cpu_here_and_says_so(tmp_path: Path, exports: Path):
    """CI has no GPU: ``auto`` (the default) must run the model on the CPU, give the same vectors as
    ``cpu``, and name the device it used."""
    import onnxruntime as ort

    texts = ["def charge_invoice(invoice, gateway): ...", "class RetryPolicy: ..."]
    auto = Embedder(DEFAULT_MODEL, exports, backend="onnx", precision="int8")
    cpu = Embedder(DEFAULT_MODEL, exports, backend="onnx", precision="int8", device="cpu")
    assert auto.device == "auto" and auto.device_used is None
    assert np.allclose(auto.encode(texts), cpu.encode(texts))
    expected = "cuda" if "CUDAExecutionProvider" in ort.get_available_providers() else "cpu"
    assert auto.device_used == expected and cpu.device_used == "cpu"


def test_asking_for_cuda_without_one_is_one_clear_line(tmp_path: Path, exports: Path):
    import onnxruntime as ort

    if "CUDAExecutionProvider" in ort.get_available_providers():
        pytest.skip("this onnxruntime has a CUDA provider")
    embedder = Embedder(DEFAULT_MODEL, exports, backend="onnx", precision="int8", device="cuda")
    with pytest.raises(EmbeddingError, match="embed_device 'cuda' needs ONNX Runtime's CUDA provider"):
        embedder.encode(["def refund(payment): ..."])
    with pytest.raises(EmbeddingError, match="not auto, cpu or cuda"):
        Embedder(DEFAULT_MODEL, tmp_path, device="tpu")


def test_embed_device_is_a_checked_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from cg.config import ConfigError, load_settings

    assert load_settings(tmp_path).embed_device == "auto"
    monkeypatch.setenv("CG_EMBED_DEVICE", "cpu")
    assert load_settings(tmp_path).embed_device == "cpu"
    monkeypatch.setenv("CG_EMBED_DEVICE", "gpu")
    with pytest.raises(ConfigError, match="unknown embed_device 'gpu'"):
        load_settings(tmp_path)
