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


RELEASE_TOOL = (
    '"""Release tooling of the platform repository: tags a version."""\n\n\n'
    "def tag_release(version: str) -> str:\n"
    '    return f"v{version}"\n'
)


def commit_nested_history(outer: Path, shop: Path) -> list[str]:
    """A platform repository ``outer`` holding the shop copy ``shop`` as a subfolder (as examples/shop
    sits in the cg clone): release tooling committed before, between and beside the shop's own two
    commits. The subjects of all five commits, newest first; three touch the shop."""
    retry = shop / "shop" / "payments" / "retry.py"
    original = retry.read_text()
    if CAPPED not in original:
        raise RuntimeError(f"examples/shop changed: {CAPPED.strip()!r} is no longer in {retry.name}")
    tools = outer / "tools"
    tools.mkdir(parents=True)
    git(outer, "init", "-q", "-b", "main")
    (tools / "release.py").write_text(RELEASE_TOOL)
    (outer / "CHANGELOG.md").write_text("# Changelog\n\n- Release tooling\n")
    git(outer, "add", "--", "tools", "CHANGELOG.md")
    git(outer, "commit", "-q", "-m", "Add release tooling", when=1_740_000_000)
    retry.write_text(original.replace(CAPPED, UNCAPPED))
    git(outer, "add", "--", str(shop.relative_to(outer)))
    git(outer, "commit", "-q", "-m", "Import the shop payments service", when=1_750_000_000)
    (tools / "release.py").write_text(RELEASE_TOOL + "\n\ndef next_patch(version: str) -> str:\n    return version\n")
    git(outer, "commit", "-q", "-am", "Release tooling: next patch version", when=1_755_000_000)
    retry.write_text(original)
    git(outer, "commit", "-q", "-am", CAP_MESSAGE, when=1_760_000_000)
    (outer / "CHANGELOG.md").write_text("# Changelog\n\n- Release tooling\n- Shop: document retries\n")
    readme = shop / "README.md"
    readme.write_text(readme.read_text() + "\nRetries are capped at three days.\n")
    git(outer, "commit", "-q", "-am", "Document the retry cap in the changelog and the shop README", when=1_765_000_000)
    return [
        "Document the retry cap in the changelog and the shop README",
        CAP_MESSAGE.splitlines()[0],
        "Release tooling: next patch version",
        "Import the shop payments service",
        "Add release tooling",
    ]
