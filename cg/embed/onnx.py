"""The ONNX Runtime embedding backend: a sentence-transformers model exported once, locally, then run
without torch.

Why ONNX Runtime: on a small CPU the model's forward pass is all of the embedding time, and ONNX
Runtime runs the same BERT graph with less framework overhead than torch, and runs int8 matrix
products on the VNNI instructions of current x86 CPUs. Both variants were measured against the torch
path in benchmarks/retrieval.py (numbers in benchmarks/RESULTS.md).

How the pipeline matches sentence-transformers (Transformer -> Pooling -> Normalize): the fast
``tokenizers`` tokenizer from the model's own ``tokenizer.json`` (the padding and truncation baked into
that file, 128 for MiniLM, are removed: padded ids with a mask of ones give other vectors; truncation
is the model's ``max_seq_length``, special tokens included, as sentence-transformers truncates), the
exported transformer, then the pooling named in ``1_Pooling/config.json`` and L2 normalisation in
numpy. fp32 vectors agree with the torch ones to a
cosine of 0.9999 or better (tests/graph/test_embed.py).

The fp32 graph is made on first use and cached under
``<cache_dir>/onnx/<hash of the model files>-v<EXPORT_VERSION>/``, so a changed model or a changed
recipe gets a new folder. For a BERT encoder (the default model and most sentence-transformers
models) cg writes the graph itself from the safetensors weights, without torch
(cg/embed/bert_onnx.py): the default install has no torch at all. Any other architecture is exported
with ``torch.onnx.export`` (opset 17) when the ``torch`` extra is installed, and is one clear error
line when it is not; torch is imported for that one export and never at run time. The trace uses
eager attention and an attention mask with zeros in it, so that the traced graph keeps the masking
path (transformers may skip an all-ones mask); a test runs a padded batch through both graphs.

Why this int8 recipe (``onnxruntime.quantization.quantize_dynamic``): weights int8 **per channel**
(one scale per output column), activations quantized dynamically at run time. Per-tensor weight
scales, the default and what torch's ``quantize_dynamic`` does, move the vectors several times further
from fp32 than per-channel scales; keeping the FFN output projections (the most sensitive layers) in
fp32 agrees better still but gives back part of the speed; ``reduce_range`` (7-bit weights, meant for
CPUs without VNNI) agreed slightly worse on a VNNI CPU and is off. benchmarks/embed_recipes.py measures
all four. ONNX Runtime's 8-bit weight-only ``MatMulNBits`` (block-wise activation quantization) agreed
better than any of them in a trial but ran little faster than fp32, so it is not offered. Activation
ranges are per run, so an int8 run embeds one text at a time: a text's vector never depends on which
other texts shared its batch, and its range is not widened by a neighbour's outliers. fp32 runs batch
texts of equal token length only, so no run pays for padding.

Even per-channel int8 moves some vectors enough to change a few rankings: benchmarks/retrieval.py
measures each variant's recall against torch's. ``int8`` is cg's default (cg/config.py): measured at
more than 3x torch's throughput with recall@10 within 0.01 of torch's on both question sets;
``int8-mixed`` agrees better with fp32 but was not reliably 3x faster.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import shutil
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from cg.errors import CgError

EXPORT_VERSION = 2  # bump when the export or the quantization recipe changes (2: torch-free BERT graph)
OPSET = 17
PRECISIONS = ("fp32", "int8", "int8-mixed")
# int8-mixed: cg's int8 recipe with the feed-forward output projections (the six ``output.dense``
# MatMuls outside attention, the layers whose activations have the widest range) left in fp32:
# measured closer to the fp32 vectors than full int8 at most of its speed (benchmarks/RESULTS.md)
_FILES = {"fp32": "model.onnx", "int8": "model-int8.onnx", "int8-mixed": "model-int8-mixed.onnx"}
_POOLING = ("pooling_mode_mean_tokens", "pooling_mode_cls_token", "pooling_mode_max_tokens")
_MODULES = (
    "sentence_transformers.models.Transformer",
    "sentence_transformers.models.Pooling",
    "sentence_transformers.models.Normalize",
)


class OnnxError(CgError, RuntimeError):
    """Something the ONNX backend needs is missing or failed: one line."""


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def files_digest(model_dir: Path) -> str:
    """sha256 over the model folder's files (names and contents): the export cache's key."""
    digest = hashlib.sha256()
    for path in sorted(p for p in model_dir.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(model_dir)).encode() + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def read_pipeline(model_dir: Path) -> tuple[str, int]:
    """The pooling mode and max_seq_length of a Transformer -> Pooling (-> Normalize) model."""
    try:
        modules = json.loads((model_dir / "modules.json").read_text("utf-8"))
        pooling_dir = next(m["path"] for m in modules if m["type"].endswith(".Pooling"))
        pooling = json.loads((model_dir / pooling_dir / "config.json").read_text("utf-8"))
        config_file = model_dir / "sentence_bert_config.json"
        config = json.loads(config_file.read_text("utf-8")) if config_file.exists() else {}
    except (OSError, ValueError, KeyError, StopIteration) as exc:
        raise OnnxError(f"not a sentence-transformers model folder ({_one_line(exc)})") from exc
    unsupported = [m["type"] for m in modules if m["type"] not in _MODULES]
    if unsupported:
        raise OnnxError(f"the onnx backend runs Transformer, Pooling and Normalize only, not {unsupported[0]}")
    modes = [mode for mode in _POOLING if pooling.get(mode)]
    others = [k for k, v in pooling.items() if k.startswith("pooling_mode") and v and k not in _POOLING]
    if len(modes) != 1 or others:
        raise OnnxError(f"the onnx backend supports one of {', '.join(_POOLING)}, not {modes + others}")
    return modes[0], int(config.get("max_seq_length") or 512)


def export_dir(model_dir: Path, cache_root: Path) -> Path:
    return cache_root / "onnx" / f"{files_digest(model_dir)[:20]}-v{EXPORT_VERSION}"


def torch_installed() -> bool:
    """Whether the ``torch`` extra is there, without importing it."""
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in ("torch", "transformers"))


def _export_fp32(model_dir: Path, target: Path) -> None:
    """The fp32 graph: written without torch for a BERT encoder, else traced by torch if installed."""
    from cg.embed.bert_onnx import UnsupportedModel, build_bert_graph

    try:
        build_bert_graph(model_dir, target)
        return
    except UnsupportedModel as exc:
        if not torch_installed():
            raise OnnxError(
                f"{exc}: without torch cg builds the ONNX graph of BERT encoders with safetensors weights"
                " only; pip install 'cg[torch]' to export this model"
            ) from exc
    export_with_torch(model_dir, target)


def export_with_torch(model_dir: Path, target: Path) -> None:
    """``torch.onnx.export`` of the model's transformer (needs the ``torch`` extra)."""
    import torch
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    model = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()

    class LastHidden(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    ids = torch.full((2, 12), 1000, dtype=torch.long)
    mask = torch.ones_like(ids)
    mask[1, 7:] = 0  # a padded row: an all-ones mask would be dropped from the traced graph
    names = ["input_ids", "attention_mask", "token_type_ids"]
    with torch.no_grad():
        torch.onnx.export(
            LastHidden(model),
            (ids, mask, torch.zeros_like(ids)),
            str(target),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes={name: {0: "batch", 1: "tokens"} for name in [*names, "last_hidden_state"]},
            opset_version=OPSET,
            do_constant_folding=True,
            dynamo=False,
        )


@contextlib.contextmanager
def _quiet():
    """No warnings, stdout chatter or root-logger advice (onnxruntime.quantization logs some) while exporting."""
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(previous)


def quantize(source: Path, target: Path, per_channel: bool = True, reduce_range: bool = False, keep_fp32=()) -> None:
    """Dynamic int8 quantization; the defaults are cg's recipe (``keep_fp32``: node names left in fp32)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with _quiet():
        quantize_dynamic(
            str(source),
            str(target),
            weight_type=QuantType.QInt8,
            per_channel=per_channel,
            reduce_range=reduce_range,
            nodes_to_exclude=list(keep_fp32),
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )


def ffn_output_nodes(fp32_model: Path) -> list[str]:
    """Names of the feed-forward output projections (MatMul of ``.../output/dense`` outside attention)."""
    import onnx

    return [
        n.name
        for n in onnx.load(str(fp32_model)).graph.node
        if n.op_type == "MatMul" and "/output/dense/" in n.name and "/attention/" not in n.name
    ]


def ensure_export(model_dir: Path, cache_root: Path, precision: str, label: str) -> Path:
    """The cached ONNX file for this model and precision, exported (once, atomically) if missing."""
    folder = export_dir(model_dir, cache_root)
    name = _FILES[precision]
    if (folder / name).exists():
        return folder / name
    print(f"cg: exporting {label} to ONNX ({precision}) once, cached in {folder}", file=sys.stderr, flush=True)
    staging = folder.with_name(f"{folder.name}.tmp{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        with _quiet():
            fp32 = folder / "model.onnx"
            if not fp32.exists():
                fp32 = staging / "model.onnx"
                _export_fp32(model_dir, fp32)
            if precision == "int8":
                quantize(fp32, staging / name)
            elif precision == "int8-mixed":
                quantize(fp32, staging / name, keep_fp32=ffn_output_nodes(fp32))
        folder.mkdir(parents=True, exist_ok=True)
        for produced in staging.iterdir():
            os.replace(produced, folder / produced.name)  # atomic per file: readers see whole files
    except OnnxError as exc:
        raise OnnxError(f"cannot export {label} to ONNX: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - any export failure is one clear line
        raise OnnxError(f"cannot export {label} to ONNX: {_one_line(exc)}") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder / name


def fast_tokenizer(model_dir: Path):
    """The model's ``tokenizer.json`` with its baked-in padding and truncation removed."""
    try:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    except Exception as exc:  # noqa: BLE001 - a missing or unreadable file
        raise OnnxError(f"no fast tokenizer for the model ({_one_line(exc)})") from exc
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def onnx_providers(requested: str, available: Sequence[str]) -> list[str]:
    """ONNX Runtime's execution providers for ``embed_device = requested``, given the ones this
    onnxruntime build offers: CUDA first when it is there (``auto``) or asked for (``cuda``, refused in
    one line without it: the CPU wheel has none, ``onnxruntime-gpu`` has), the CPU always last, since
    ONNX Runtime places on it the nodes the CUDA provider has no kernel for (int8's among them)."""
    if requested != "cpu" and "CUDAExecutionProvider" in available:
        return ["CUDAExecutionProvider", "CPUExecutionProvider"]
    if requested == "cuda":
        raise OnnxError(
            "embed_device 'cuda' needs ONNX Runtime's CUDA provider (the onnxruntime-gpu package); this"
            f" onnxruntime offers {', '.join(available) or 'none'}; use 'auto' or 'cpu'"
        )
    return ["CPUExecutionProvider"]


class OnnxEncoder:
    """Texts -> unit vectors with ONNX Runtime, tokenised and pooled like sentence-transformers."""

    def __init__(
        self,
        model_dir: Path,
        cache_root: Path,
        precision: str,
        max_tokens: int,
        batch_size: int,
        label: str = "",
        model_file: Path | None = None,
        device: str = "cpu",
    ) -> None:
        """``model_file`` runs that ONNX file instead of the cached export (benchmarks compare recipes)."""
        if precision not in PRECISIONS:
            raise OnnxError(f"embedding precision {precision!r} is not one of {', '.join(PRECISIONS)}")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        try:
            import onnxruntime as ort
        except ImportError as exc:
            raise OnnxError("embed_backend 'onnx' needs onnxruntime and onnx (pip install onnxruntime onnx)") from exc
        self.pooling, window = read_pipeline(model_dir)
        self.window = min(window, max_tokens) if max_tokens else window
        self.tokenizer = fast_tokenizer(model_dir)
        self.tokenizer.enable_truncation(max_length=self.window)
        # int8: one text per run, since activation ranges are per run (see the module docstring)
        self.batch_size = 1 if precision.startswith("int8") else max(1, batch_size)
        path = model_file or ensure_export(model_dir, cache_root, precision, label or model_dir.name)
        options = ort.SessionOptions()
        options.intra_op_num_threads = _cores()
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        providers = onnx_providers(device, ort.get_available_providers())
        try:
            self.session = ort.InferenceSession(str(path), options, providers=providers)
        except Exception as exc:  # noqa: BLE001 - a damaged cache file
            raise OnnxError(f"cannot load {path.name} ({_one_line(exc)}); delete {path.parent} to re-export") from exc
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.device = "cuda" if "CUDAExecutionProvider" in self.session.get_providers() else "cpu"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors in input order; runs group texts of equal token length."""
        encodings = self.tokenizer.encode_batch(list(texts))
        out = np.zeros((len(encodings), 0), dtype=np.float32)
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        start = 0
        while start < len(order):
            length = len(encodings[order[start]].ids)
            stop = start + 1
            while stop < len(order) and stop - start < self.batch_size and len(encodings[order[stop]].ids) == length:
                stop += 1
            batch = order[start:stop]
            ids = np.array([encodings[i].ids for i in batch], dtype=np.int64)
            mask = np.array([encodings[i].attention_mask for i in batch], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = np.array([encodings[i].type_ids for i in batch], dtype=np.int64)
            hidden = self.session.run(None, feed)[0]
            vectors = self._pool(hidden, mask)
            if out.shape[1] == 0:
                out = np.zeros((len(encodings), vectors.shape[1]), dtype=np.float32)
            out[batch] = vectors
            start = stop
        return out

    def _pool(self, hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
        weights = mask[:, :, None].astype(np.float32)
        if self.pooling == "pooling_mode_cls_token":
            pooled = hidden[:, 0]
        elif self.pooling == "pooling_mode_max_tokens":
            pooled = np.where(weights > 0, hidden, -1e9).max(axis=1)
        else:
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
