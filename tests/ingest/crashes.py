"""What the crash and concurrency tests share: the edit they make, the queries they ask, and clean
indexes of the shop before and after that edit to compare with."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from cg.api import settings_for
from cg.graph.backends import open_store
from tests.conftest import cg_command, copy_shop
from tests.graphdump import dump
from tests.neo4j_env import neo4j_settings

CALLERS = ("callers", "schedule_payment_retry")
EXPLAIN = ("explain", "how is a failed payment retried?")
# a new caller of schedule_payment_retry: `cg callers` tells the tree before the edit from the one after
EDIT_FILE = "shop/payments/dunning.py"
EDIT = '''"""Dunning: chase an unpaid invoice by retrying its payment."""

from shop.payments.retry import schedule_payment_retry


def chase_unpaid_invoice(invoice, attempt):
    """Retry the payment of an invoice a customer has not paid yet."""
    return schedule_payment_retry(invoice, attempt)
'''


def env_for(backend: str, resolver: str = "name") -> dict[str, str]:
    env = {"CG_RESOLVER": resolver, "CG_BACKEND": backend, "CG_INDEX_LOCK_WAIT": "5"}
    if resolver == "jedi":  # a loaded machine must not turn a file of the clean build into a name fallback
        env["CG_JEDI_BUDGET"] = "300"
    if backend == "neo4j":
        from tests.cli.test_cli_neo4j import NEO4J

        env.update(NEO4J)
    return env


def answers_of(repo: Path, env: dict[str, str]) -> dict[str, subprocess.CompletedProcess[str]]:
    return {q[0]: cg_command(*q, "--repo", str(repo), check=False, env=env) for q in (CALLERS, EXPLAIN)}


def graph_of(repo: Path, backend: str) -> dict[str, set[tuple]]:
    settings = neo4j_settings(repo) if backend == "neo4j" else settings_for(repo, backend)
    with open_store(settings, read_only=True) as store:
        return dump(store)


@dataclass(frozen=True)
class Clean:
    """What a clean index of a tree answers, and its graph."""

    answers: dict[str, str]
    graph: dict[str, set[tuple]]


def make_clean(tmp: Path, backend: str, edited: bool, resolver: str = "name") -> Clean:
    repo = copy_shop(tmp / f"clean-{backend}-{resolver}-{'edited' if edited else 'original'}")
    if edited:
        (repo / EDIT_FILE).write_text(EDIT)
    env = env_for(backend, resolver)
    cg_command("index", str(repo), "--full", env=env)
    answers = {k: r.stdout for k, r in answers_of(repo, env).items()}
    assert "6 callers" in answers["callers"] if edited else "5 callers" in answers["callers"]
    return Clean(answers, graph_of(repo, backend))
