"""The ONNX graph of a BERT encoder written node by node from its safetensors weights: no torch.

Why write the graph instead of tracing it: ``torch.onnx.export`` needs torch (with PyPI's CUDA build,
gigabytes) for one export of a graph whose shape is known in advance. A BERT encoder is a dozen
operators repeated per layer, so cg writes them with ``onnx.helper`` and reads the weights with
``safetensors.numpy`` (a data format, never a pickle): the default install then needs ONNX Runtime,
``onnx``, ``safetensors``, ``tokenizers`` and numpy only. The graph computes what transformers'
``BertModel`` computes with eager attention (tests/graph/test_embed.py compares the pooled vectors
with sentence-transformers', cosine >= 0.9999):

- embeddings: word[input_ids] + position[0..S) + token_type[token_type_ids], then LayerNorm;
- per layer: Q, K, V projections split into heads, softmax(Q K^T / sqrt(d) + mask) V with the padded
  keys given the float32 minimum (transformers' extended attention mask), the output projection plus
  the residual, LayerNorm; the feed-forward block (``hidden_act``: exact erf GELU as BERT's "gelu",
  the tanh approximation, or ReLU) plus the residual, LayerNorm;
- output ``last_hidden_state`` [batch, tokens, hidden]; inputs ``input_ids``, ``attention_mask``,
  ``token_type_ids`` (int64 [batch, tokens]), the names the torch export had.

Node names follow the torch export's (``/encoder/layer.N/output/dense/MatMul``...), so the int8
recipes that pick nodes by name (cg/embed/onnx.py's ``int8-mixed``) work on either graph. Other
architectures (RoBERTa's offset positions, relative position embeddings, decoders) are refused with
one line; with the ``torch`` extra installed cg exports those through ``torch.onnx.export`` instead.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from cg.errors import CgError

OPSET = 17  # LayerNormalization is an ONNX operator from 17 on
_ACTIVATIONS = ("gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast", "relu")


class UnsupportedModel(CgError, ValueError):
    """The model is not a BERT encoder this builder can write without torch."""


def bert_config(model_dir: Path) -> dict:
    """The model's config.json when the torch-free builder can write its graph, else UnsupportedModel."""
    try:
        config = json.loads((model_dir / "config.json").read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise UnsupportedModel(f"no readable config.json in {model_dir.name}") from exc
    kind = config.get("model_type")
    if kind != "bert":
        raise UnsupportedModel(f"model_type {kind!r} is not bert")
    problems = [
        f"position_embedding_type {config.get('position_embedding_type')!r}"
        if config.get("position_embedding_type", "absolute") != "absolute"
        else "",
        f"hidden_act {config.get('hidden_act')!r}" if config.get("hidden_act", "gelu") not in _ACTIVATIONS else "",
        "is_decoder" if config.get("is_decoder") else "",
    ]
    problems = [p for p in problems if p]
    if problems:
        raise UnsupportedModel(f"bert with {problems[0]}")
    if config["hidden_size"] % config["num_attention_heads"]:
        raise UnsupportedModel("hidden_size is not a multiple of num_attention_heads")
    return config


def read_weights(model_dir: Path) -> dict[str, np.ndarray]:
    """The model's tensors as float32 numpy arrays, by name without a ``bert.`` prefix."""
    from safetensors.numpy import load_file

    index = model_dir / "model.safetensors.index.json"
    if index.exists():
        shards = sorted(set(json.loads(index.read_text("utf-8"))["weight_map"].values()))
        files = [model_dir / shard for shard in shards]
    else:
        files = [model_dir / "model.safetensors"]
    missing = [f.name for f in files if not f.is_file()]
    if missing:
        raise UnsupportedModel(f"no {missing[0]} (the torch-free export reads safetensors weights only)")
    weights: dict[str, np.ndarray] = {}
    for file in files:
        try:
            tensors = load_file(str(file))
        except Exception as exc:  # noqa: BLE001 - bfloat16 (numpy has none) or a damaged file
            raise UnsupportedModel(f"cannot read {file.name} with numpy ({exc})") from exc
        for name, value in tensors.items():
            key = name.removeprefix("bert.")
            weights[key] = value.astype(np.float32) if value.dtype.kind == "f" else value
    return weights


class _Graph:
    """Nodes and initializers of one graph, with the names the torch export gives them."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        self.weights = weights
        self.nodes: list = []
        self.initializers: list = []
        self._constants: set[str] = set()

    def op(self, op_type: str, inputs: list[str], name: str, **attrs) -> str:
        from onnx import helper

        output = f"{name}_output_0"
        self.nodes.append(helper.make_node(op_type, inputs, [output], name=name, **attrs))
        return output

    def constant(self, name: str, value: np.ndarray | np.generic) -> str:
        from onnx import numpy_helper

        if name not in self._constants:
            self.initializers.append(numpy_helper.from_array(np.asarray(value), name))
            self._constants.add(name)
        return name

    def weight(self, key: str, transpose: bool = False) -> str:
        if key not in self.weights:
            raise UnsupportedModel(f"the weights have no tensor {key!r}")
        value = self.weights[key]
        # a Linear's weight is [out, in]; MatMul wants [in, out]
        return self.constant(key + (".T" if transpose else ""), np.ascontiguousarray(value.T) if transpose else value)

    def linear(self, x: str, prefix: str, scope: str) -> str:
        product = self.op("MatMul", [x, self.weight(f"{prefix}.weight", transpose=True)], f"{scope}/MatMul")
        return self.op("Add", [product, self.weight(f"{prefix}.bias")], f"{scope}/Add")

    def heads(self, x: str, prefix: str, scope: str, split: str, perm: list[int]) -> str:
        """A projection split into heads: [batch, heads, tokens, size], or [batch, heads, size, tokens]."""
        shaped = self.op("Reshape", [self.linear(x, prefix, scope), split], f"{scope}/Reshape")
        return self.op("Transpose", [shaped], f"{scope}/Transpose", perm=perm)

    def layer_norm(self, x: str, prefix: str, scope: str, eps: float) -> str:
        scale, bias = self.weight(f"{prefix}.weight"), self.weight(f"{prefix}.bias")
        return self.op("LayerNormalization", [x, scale, bias], f"{scope}/LayerNormalization", axis=-1, epsilon=eps)

    def activation(self, x: str, act: str, scope: str) -> str:
        if act == "relu":
            return self.op("Relu", [x], f"{scope}/Relu")
        half, one = self.constant("half", np.float32(0.5)), self.constant("one", np.float32(1.0))
        if act == "gelu":  # exact: x * 0.5 * (1 + erf(x / sqrt(2)))
            scaled = self.op("Div", [x, self.constant("sqrt2", np.float32(math.sqrt(2.0)))], f"{scope}/Div")
            inner = self.op("Erf", [scaled], f"{scope}/Erf")
        else:  # tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
            cube = self.op("Pow", [x, self.constant("three", np.float32(3.0))], f"{scope}/Pow")
            cubic = self.op("Mul", [cube, self.constant("gelu_c", np.float32(0.044715))], f"{scope}/Mul_c")
            summed = self.op("Add", [x, cubic], f"{scope}/Add_c")
            root = self.constant("gelu_root", np.float32(math.sqrt(2.0 / math.pi)))
            inner = self.op("Tanh", [self.op("Mul", [summed, root], f"{scope}/Mul_r")], f"{scope}/Tanh")
        plus_one = self.op("Add", [inner, one], f"{scope}/Add")
        return self.op("Mul", [self.op("Mul", [x, half], f"{scope}/Mul_h"), plus_one], f"{scope}/Mul")


def build_bert_graph(model_dir: Path, target: Path) -> None:
    """Write the fp32 ONNX graph of the BERT encoder in ``model_dir`` to ``target``."""
    import onnx
    from onnx import TensorProto, helper

    config = bert_config(model_dir)
    hidden, heads = int(config["hidden_size"]), int(config["num_attention_heads"])
    head_size, eps = hidden // heads, float(config.get("layer_norm_eps", 1e-12))
    act = config.get("hidden_act", "gelu")
    g = _Graph(read_weights(model_dir))

    # embeddings
    words = g.op("Gather", [g.weight("embeddings.word_embeddings.weight"), "input_ids"], "/embeddings/word/Gather")
    types = g.op(
        "Gather", [g.weight("embeddings.token_type_embeddings.weight"), "token_type_ids"], "/embeddings/type/Gather"
    )
    length = g.op(
        "Gather",
        [g.op("Shape", ["input_ids"], "/embeddings/Shape"), g.constant("one_index", np.array([1], np.int64))],
        "/embeddings/Gather_len",
    )
    positions = g.op(
        "Slice",
        [
            g.weight("embeddings.position_embeddings.weight"),
            g.constant("zero_index", np.array([0], np.int64)),
            length,
            g.constant("zero_index", np.array([0], np.int64)),
        ],
        "/embeddings/position/Slice",
    )
    summed = g.op("Add", [g.op("Add", [words, types], "/embeddings/Add"), positions], "/embeddings/Add_1")
    x = g.layer_norm(summed, "embeddings.LayerNorm", "/embeddings/LayerNorm", eps)

    # the additive mask [batch, 1, 1, tokens]: 0 on real tokens, float32's minimum on padding
    mask = g.op("Cast", ["attention_mask"], "/mask/Cast", to=TensorProto.FLOAT)
    inverted = g.op("Sub", [g.constant("one", np.float32(1.0)), mask], "/mask/Sub")
    additive = g.op("Mul", [inverted, g.constant("float_min", np.float32(np.finfo(np.float32).min))], "/mask/Mul")
    additive = g.op("Unsqueeze", [additive, g.constant("mask_axes", np.array([1, 2], np.int64))], "/mask/Unsqueeze")

    split = g.constant("heads_shape", np.array([0, 0, heads, head_size], np.int64))
    merge = g.constant("hidden_shape", np.array([0, 0, hidden], np.int64))
    scale = g.constant("attention_scale", np.float32(1.0 / math.sqrt(head_size)))
    for i in range(int(config["num_hidden_layers"])):
        p, s = f"encoder.layer.{i}", f"/encoder/layer.{i}"

        query = g.heads(x, f"{p}.attention.self.query", f"{s}/attention/self/query", split, [0, 2, 1, 3])
        key = g.heads(x, f"{p}.attention.self.key", f"{s}/attention/self/key", split, [0, 2, 3, 1])
        value = g.heads(x, f"{p}.attention.self.value", f"{s}/attention/self/value", split, [0, 2, 1, 3])
        scores = g.op("MatMul", [query, key], f"{s}/attention/self/MatMul")
        scores = g.op("Mul", [scores, scale], f"{s}/attention/self/Mul")
        scores = g.op("Add", [scores, additive], f"{s}/attention/self/Add")
        probs = g.op("Softmax", [scores], f"{s}/attention/self/Softmax", axis=-1)
        context = g.op("MatMul", [probs, value], f"{s}/attention/self/MatMul_1")
        context = g.op("Transpose", [context], f"{s}/attention/self/Transpose", perm=[0, 2, 1, 3])
        context = g.op("Reshape", [context, merge], f"{s}/attention/self/Reshape")
        attended = g.linear(context, f"{p}.attention.output.dense", f"{s}/attention/output/dense")
        attended = g.op("Add", [attended, x], f"{s}/attention/output/Add")
        x = g.layer_norm(attended, f"{p}.attention.output.LayerNorm", f"{s}/attention/output/LayerNorm", eps)
        inner = g.linear(x, f"{p}.intermediate.dense", f"{s}/intermediate/dense")
        inner = g.activation(inner, act, f"{s}/intermediate/intermediate_act_fn")
        out = g.linear(inner, f"{p}.output.dense", f"{s}/output/dense")
        out = g.op("Add", [out, x], f"{s}/output/Add")
        x = g.layer_norm(out, f"{p}.output.LayerNorm", f"{s}/output/LayerNorm", eps)
    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="/last_hidden_state"))

    tokens = ["batch", "tokens"]
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, tokens)
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*tokens, hidden])
    graph = helper.make_graph(g.nodes, "bert", inputs, [output], initializer=g.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="cg")
    model.ir_version = min(model.ir_version, 8)  # readable by any ONNX Runtime that runs opset 17
    onnx.checker.check_model(model)
    onnx.save_model(model, str(target))
