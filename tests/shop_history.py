"""examples/shop as a git repository with a short, reproducible history: the first commit has an
uncapped retry backoff, the second caps it. Fixed authors and dates keep every sha stable, so the
freshness tests and the docs' pasted output (docs/cogs.py) see the same commits on any machine."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Dana Okafor",
    "GIT_AUTHOR_EMAIL": "dana@example.com",
    "GIT_COMMITTER_NAME": "Dana Okafor",
    "GIT_COMMITTER_EMAIL": "dana@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}
CAP_MESSAGE = (
    "Cap retry backoff at three days\n\n"
    "Card networks penalise merchants who keep retrying the same card for weeks, and a customer\n"
    "whose card was declined a week ago has usually churned. Cap the delay between two attempts."
)
CAPPED = "    return min(base * multiplier ** (attempt - 1), MAX_DELAY_SECONDS)"
UNCAPPED = "    return base * multiplier ** (attempt - 1)"


def git(repo: Path, *args: str, when: int = 1_750_000_000) -> str:
    """Run git in ``repo`` as the fixed author at the fixed time ``when`` (unix seconds); its stdout."""
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": f"{when} +0000", "GIT_COMMITTER_DATE": f"{when} +0000"}
    done = subprocess.run(["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True)
    return done.stdout


def commit_history(repo: Path) -> Path:
    """Turn a fresh copy of examples/shop into a two-commit repository; the last commit caps the backoff."""
    retry = repo / "shop" / "payments" / "retry.py"
    original = retry.read_text()
    if CAPPED not in original:
        raise RuntimeError(f"examples/shop changed: {CAPPED.strip()!r} is no longer in {retry.name}")
    git(repo, "init", "-q", "-b", "main")
    retry.write_text(original.replace(CAPPED, UNCAPPED))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Import the shop payments service", when=1_750_000_000)
    retry.write_text(original)
    git(repo, "commit", "-q", "-am", CAP_MESSAGE, when=1_760_000_000)
    return repo
