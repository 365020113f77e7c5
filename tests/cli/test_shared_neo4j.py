"""Neo4j as a shared server, through the real CLI: two repositories (the shop and the polyglot fixture)
in one database stay whole and apart; re-indexing one leaves the other as it was; two writers of one
repository at once end with one refused in one line and the graph of a clean run; a killed writer's
lease runs out and the next run takes over. Name resolution keeps the runs short (the graph's shape is
what is compared, on both backends with the same resolver)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.test_cli_neo4j import NEO4J, needs_server
from tests.conftest import cg_command, copy_shop

pytestmark = needs_server
POLYGLOT = Path(__file__).resolve().parents[1] / "fixtures" / "polyglot"
SHOP_KEY, POLY_KEY = "github.com/acme/shop", "github.com/acme/polyglot"
FAST = {"CG_RESOLVER": "name", "CG_HISTORY_COMMITS": "0"}
CALLS = (
    "MATCH (a:Symbol)-[c:CALLS]->(b) WHERE a.repo = $repo"
    " RETURN a.id AS src, b.id AS dst, c.line AS line, c.resolved_by AS how ORDER BY src, dst, line"
)


def on_neo4j(key: str) -> dict[str, str]:
    return {**NEO4J, **FAST, "CG_REPO_KEY": key}


def stats(repo: Path, env: dict[str, str] | None = None) -> dict[str, int]:
    return json.loads(cg_command("stats", "--json", "--repo", str(repo), env=env or FAST).stdout)


def calls(repo: Path, env: dict[str, str] | None = None) -> list[dict]:
    return json.loads(cg_command("cypher", CALLS, "--json", "--repo", str(repo), env=env or FAST).stdout)


@pytest.fixture(scope="module")
def two_repos(tmp_path_factory) -> dict[str, Path]:
    """The shop and the polyglot fixture, each indexed alone on Kùzu (the reference) and both into the
    one Neo4j database."""
    root = tmp_path_factory.mktemp("shared")
    shop = copy_shop(root / "shop")
    polyglot = root / "polyglot"
    shutil.copytree(POLYGLOT, polyglot)
    for repo, key in ((shop, SHOP_KEY), (polyglot, POLY_KEY)):
        cg_command("index", str(repo), env=FAST)
        cg_command("index", str(repo), "--rebuild", env=on_neo4j(key))
    return {"shop": shop, "polyglot": polyglot}


def test_both_graphs_are_whole_and_equal_a_single_repository_index(two_repos):
    for name, key in (("shop", SHOP_KEY), ("polyglot", POLY_KEY)):
        repo = two_repos[name]
        assert stats(repo, on_neo4j(key)) == stats(repo), name
        assert calls(repo, on_neo4j(key)) == calls(repo), name
    assert stats(two_repos["shop"], on_neo4j(SHOP_KEY))["CALLS"] > 300


def test_queries_never_answer_with_the_other_repositorys_nodes(two_repos):
    shop, polyglot = two_repos["shop"], two_repos["polyglot"]
    shop_files = {p.relative_to(shop).as_posix() for p in shop.rglob("*") if p.is_file()}
    retry = json.loads(
        cg_command("callers", "schedule_payment_retry", "--json", "--repo", str(shop), env=on_neo4j(SHOP_KEY)).stdout
    )
    assert retry == json.loads(cg_command("callers", "schedule_payment_retry", "--json", "--repo", str(shop)).stdout)
    assert len(retry["callers"]) == 5 and {c["path"] for c in retry["callers"]} <= shop_files
    # 'charge' is defined in both: the polyglot graph names only its own seven definitions
    ambiguous = cg_command("callers", "charge", "--repo", str(polyglot), check=False, env=on_neo4j(POLY_KEY))
    assert ambiguous.returncode != 0 and "7 definitions match" in ambiguous.stderr
    assert "shop/" not in ambiguous.stderr
    found = cg_command("search", "payment retry backoff", "--json", "--repo", str(polyglot), env=on_neo4j(POLY_KEY))
    polyglot_files = {p.relative_to(polyglot).as_posix() for p in polyglot.rglob("*") if p.is_file()}
    hits = json.loads(found.stdout)
    assert len(hits) == 10 and {h["path"] for h in hits} <= polyglot_files
    # Cypher gets $repo; without a filter it sees every repository (on request)
    everything = "MATCH (f:File) RETURN DISTINCT f.repo AS repo ORDER BY repo"
    repos = [
        r["repo"]
        for r in json.loads(
            cg_command("cypher", everything, "--json", "--repo", str(polyglot), env=on_neo4j(POLY_KEY)).stdout
        )
    ]
    assert POLY_KEY in repos and SHOP_KEY in repos


def test_search_across_all_repositories_on_request(two_repos):
    shop, polyglot = two_repos["shop"], two_repos["polyglot"]
    files = {
        key: {p.relative_to(repo).as_posix() for p in repo.rglob("*") if p.is_file()}
        for key, repo in ((SHOP_KEY, shop), (POLY_KEY, polyglot))
    }
    question = ("search", "retry a failed payment with backoff", "--json", "-n", "20")
    both = json.loads(cg_command(*question, "--all-repos", "--repo", str(polyglot), env=on_neo4j(POLY_KEY)).stdout)
    assert len(both) == 20 and {h["repo"] for h in both} >= {SHOP_KEY, POLY_KEY}
    assert all(h["path"] in files[h["repo"]] for h in both if h["repo"] in files)  # (others may share the server)
    assert [h["score"] for h in both] == sorted((h["score"] for h in both), reverse=True)
    alone = json.loads(cg_command(*question, "--repo", str(shop), env=on_neo4j(SHOP_KEY)).stdout)
    mine = [h["id"] for h in both if h["repo"] == SHOP_KEY]
    assert mine == [h["id"] for h in alone][: len(mine)]  # each repository's own order, interleaved
    assert "repo" not in alone[0]


def test_reindexing_one_repository_leaves_the_other_untouched(two_repos):
    shop, polyglot = two_repos["shop"], two_repos["polyglot"]
    before = stats(polyglot, on_neo4j(POLY_KEY)), calls(polyglot, on_neo4j(POLY_KEY))
    rebuilt = cg_command("index", str(shop), "--rebuild", env=on_neo4j(SHOP_KEY)).stdout
    assert "removed" not in rebuilt
    assert (stats(polyglot, on_neo4j(POLY_KEY)), calls(polyglot, on_neo4j(POLY_KEY))) == before
    status = cg_command("status", "--repo", str(polyglot), env=on_neo4j(POLY_KEY)).stdout
    assert "up to date with the working tree" in status


def _spawn(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    cg = Path(sys.executable).parent / "cg"
    command = [str(cg)] if cg.exists() else [sys.executable, "-m", "cg.cli"]
    return subprocess.Popen(
        [*command, *args], env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_two_writers_of_one_repository_and_a_reader_loop(two_repos):
    """Both writers start at once: one runs, the other is refused in one line naming the holder (exit
    75) while the other repository answers every query unchanged; the graph after is a clean run's."""
    shop, polyglot = two_repos["shop"], two_repos["polyglot"]
    clean = stats(shop), calls(shop)
    other = stats(polyglot, on_neo4j(POLY_KEY))
    writers = [_spawn("index", str(shop), "--rebuild", "--wait", "0", env=on_neo4j(SHOP_KEY)) for _ in range(2)]
    deadline, reads = time.monotonic() + 300, 0
    while any(w.poll() is None for w in writers):
        assert time.monotonic() < deadline, "the writers did not finish in 5 minutes"
        assert stats(polyglot, on_neo4j(POLY_KEY)) == other
        mid_run = cg_command("stats", "--json", "--repo", str(shop), check=False, env=on_neo4j(SHOP_KEY))
        assert mid_run.returncode in (0, 1) and len(mid_run.stderr.strip().splitlines()) <= 1, mid_run.stderr
        reads += 1
    outcomes = sorted((w.returncode, w.communicate()[1].strip()) for w in writers)
    assert [code for code, _ in outcomes] == [0, 75], outcomes
    refused = outcomes[1][1].splitlines()
    assert len(refused) == 1 and refused[0].startswith(f"cg: repository '{SHOP_KEY}' is being indexed by pid ")
    assert "lease runs out in" in refused[0] and reads >= 1
    assert (stats(shop, on_neo4j(SHOP_KEY)), calls(shop, on_neo4j(SHOP_KEY))) == clean


def test_writers_of_different_repositories_run_at_once(two_repos):
    shop, polyglot = two_repos["shop"], two_repos["polyglot"]
    writers = [
        _spawn("index", str(repo), "--rebuild", env=on_neo4j(key))
        for repo, key in ((shop, SHOP_KEY), (polyglot, POLY_KEY))
    ]
    outcomes = [(w.wait(300), w.communicate()[1]) for w in writers]
    assert [code for code, _ in outcomes] == [0, 0], outcomes
    for repo, key in ((shop, SHOP_KEY), (polyglot, POLY_KEY)):
        assert (stats(repo, on_neo4j(key)), calls(repo, on_neo4j(key))) == (stats(repo), calls(repo))


def test_a_writer_killed_on_this_machine_is_taken_over_at_once(two_repos):
    """Same boot, same pid namespace, its pid gone: the next run need not wait for the lease to run out."""
    shop = two_repos["shop"]
    clean = stats(shop), calls(shop)
    env = {**on_neo4j(SHOP_KEY), "CG_LEASE_SECONDS": "600"}
    victim = _spawn("index", str(shop), "--rebuild", env=env)
    _wait_for_lease(SHOP_KEY, victim)
    victim.send_signal(signal.SIGKILL)
    victim.wait(30)
    started = time.monotonic()
    taken = cg_command("index", str(shop), "--wait", "0", env=env)  # the killed run committed nothing:
    assert taken.returncode == 0 and not taken.stderr  # its lease is taken over, the graph is the last complete one
    assert time.monotonic() - started < 120
    assert (stats(shop, on_neo4j(SHOP_KEY)), calls(shop, on_neo4j(SHOP_KEY))) == clean


def test_a_lease_held_from_another_machine_is_refused_then_taken_when_it_runs_out(two_repos):
    """A holder cg cannot see (another machine, or a pid namespace of its own) keeps the repository
    until its lease runs out: one line with exit 75 before, a normal run after."""
    import neo4j

    from cg.graph.lease import Lease

    shop = two_repos["shop"]
    driver = neo4j.GraphDatabase.driver(NEO4J["NEO4J_URI"], auth=(NEO4J["NEO4J_USERNAME"], NEO4J["NEO4J_PASSWORD"]))
    try:

        def run(query, params):
            return [list(r.values()) for r in driver.execute_query(query, params)[0]]

        elsewhere = Lease(run, SHOP_KEY, seconds=10)
        elsewhere.host, elsewhere.pid, elsewhere.space = "build-7", 48211, "another-machine"
        assert elsewhere.try_take() is None  # taken, never renewed: it runs out in 10 s
    finally:
        driver.close()
    refused = cg_command("index", str(shop), "--wait", "0", check=False, env=on_neo4j(SHOP_KEY))
    assert refused.returncode == 75 and "by pid 48211 on build-7" in refused.stderr
    assert refused.stderr.count("\n") == 1
    taken = cg_command("index", str(shop), "--wait", "60", env=on_neo4j(SHOP_KEY))
    assert taken.returncode == 0


def _wait_for_lease(key: str, process: subprocess.Popen[str]) -> int:
    """The pid holding ``key``'s lease, once ``process`` has taken it."""
    import neo4j

    driver = neo4j.GraphDatabase.driver(NEO4J["NEO4J_URI"], auth=(NEO4J["NEO4J_USERNAME"], NEO4J["NEO4J_PASSWORD"]))
    try:
        for _ in range(300):
            assert process.poll() is None, process.communicate()
            records, _, _ = driver.execute_query("MATCH (l:IndexLock {repo: $repo}) RETURN l.pid", {"repo": key})
            if records and records[0][0] == process.pid:
                time.sleep(2)  # well into the run
                return process.pid
            time.sleep(0.1)
    finally:
        driver.close()
    raise AssertionError("the writer never took its lease")
