"""Which int8 recipe the ONNX backend uses (cg/embed/onnx.py), measured: dynamic quantization with
per-tensor weight scales, per-channel scales (cg's recipe), per-channel with ``reduce_range``, and
per-channel with the FFN output projections kept in fp32, against the fp32 export, torch fp32 and
torch's own dynamic int8. Each path embeds the same definitions (every function and class of cg/
and examples/shop with a path header) in interleaved rounds; the table gives the best round's
texts/s and the cosine of its vectors to the torch fp32 ones.

    python benchmarks/embed_recipes.py
"""

from __future__ import annotations

import ast
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from results import machine_line, write_section  # noqa: E402
from retrieval import ROUNDS, speed_and_agreement  # noqa: E402

from cg.embed import DEFAULT_MODEL, Embedder, resolve_model_path  # noqa: E402
from cg.embed.onnx import OnnxEncoder, ensure_export, ffn_output_nodes, quantize  # noqa: E402

LIMIT = 400


def definitions(folder: Path) -> list[str]:
    texts = []
    for path in sorted(folder.rglob("*.py")):
        source = path.read_text("utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                texts.append(f"# {path.relative_to(ROOT)} > {node.name}\n{ast.get_source_segment(source, node)}")
    return texts


def main() -> None:

    texts = (definitions(ROOT / "cg") + definitions(ROOT / "examples" / "shop"))[:LIMIT]
    work = Path(tempfile.mkdtemp(prefix="cg-recipes-"))
    try:
        model_dir = Path(resolve_model_path(DEFAULT_MODEL))
        fp32 = ensure_export(model_dir, work, "fp32", DEFAULT_MODEL)
        ffn_out = ffn_output_nodes(fp32)
        recipes = {
            "int8 per-tensor": {"per_channel": False},
            "int8 per-channel (cg's recipe)": {},
            "int8 per-channel, reduce_range": {"reduce_range": True},
            f"int8 per-channel, {len(ffn_out)} FFN output projections fp32": {"keep_fp32": ffn_out},
        }
        paths: list[tuple[str, object]] = [
            ("torch fp32", Embedder(DEFAULT_MODEL, work)),
            ("torch int8 (dynamic, per-tensor)", Embedder(DEFAULT_MODEL, work, precision="int8")),
            ("ONNX fp32", OnnxEncoder(model_dir, work, "fp32", 0, 32, model_file=fp32)),
        ]
        for index, (name, options) in enumerate(recipes.items()):
            target = work / f"recipe{index}.onnx"
            quantize(fp32, target, **options)
            paths.append((f"ONNX {name}", OnnxEncoder(model_dir, work, "int8", 0, 32, model_file=target)))
        measured = speed_and_agreement(paths, texts)  # type: ignore[arg-type]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    base = measured["torch fp32"][0]
    lines = [
        machine_line(),
        "",
        f"{len(texts)} definitions of cg/ and examples/shop; best of {ROUNDS} interleaved rounds; ONNX int8 runs one",
        "text at a time, ONNX fp32 batches texts of equal token length, torch batches 32.",
        "",
        "| path | texts/s | vs torch fp32 | cosine to torch fp32 (mean / min) |",
        "|---|---|---|---|",
    ]
    for name, (speed, agreement) in measured.items():
        lines.append(f"| {name} | {speed:.1f} | {speed / base:.2f}x | {agreement} |")
        print(lines[-1], flush=True)
    write_section("ONNX int8 recipes (benchmarks/embed_recipes.py)", "\n".join(lines))


if __name__ == "__main__":
    main()
