"""A mixed-language repository through the real CLI: index, explain, search a config key."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import cg_command

POLYGLOT = Path(__file__).resolve().parents[1] / "fixtures" / "polyglot"


@pytest.fixture(scope="module")
def polyglot_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    repo = tmp_path_factory.mktemp("polyglot") / "polyglot"
    shutil.copytree(POLYGLOT, repo, ignore=shutil.ignore_patterns(".cg"))
    summary = json.loads(cg_command("index", str(repo), "--json").stdout)
    return repo, summary


def test_index_counts_every_language(polyglot_repo):
    _, summary = polyglot_repo
    assert summary["files"] == sum(1 for p in POLYGLOT.rglob("*") if p.is_file()) - 1
    assert summary["other_files"] == 1  # go.mod: read by the resolver, not indexed
    assert summary["edges"]["INHERITS"] >= 10 and summary["calls_in_repo"] >= 50
    assert summary["syntax_errors"] == []
    assert summary["languages"] == {
        "typescript": 12,
        "java": 10,
        "javascript": 7,
        "go": 6,
        "rust": 4,
        "yaml": 2,
        "json": 2,
        "sql": 1,
        "toml": 1,
        "dockerfile": 1,
    }
    assert summary["calls_ambiguous"] == 1  # reportFailure, defined twice in the worker


def test_index_text_summary_names_the_languages(polyglot_repo):
    repo, _ = polyglot_repo
    out = cg_command("index", str(repo)).stdout
    assert "languages: 12 typescript, 10 java, 7 javascript, 6 go, 4 rust" in out
    assert "(1 ambiguous, not guessed)" in out
    assert "jedi:" not in out  # no Python here


def test_explain_follows_a_go_flow_across_files(polyglot_repo):
    repo, _ = polyglot_repo
    query = "schedule a payment retry when the card is declined"
    data = json.loads(cg_command("explain", query, "--json", cwd=repo).stdout)
    go = "payments-go/internal/"
    nodes = {n["id"]: n for n in data["nodes"]}
    go_ids = {i for i in nodes if i.startswith(go)}
    assert go_ids & {f"{go}server/server.go::Server.HandleCharge", f"{go}retry/retry.go::SchedulePaymentRetry"}
    assert f"{go}store/store.go::PaymentStore.SavePayment" in go_ids  # two hops away, in a third file
    assert len({nodes[i]["path"] for i in go_ids}) >= 3
    calls = [(e["src"], e["dst"]) for e in data["edges"] if e["type"] == "CALLS"]
    assert any(nodes[a]["path"] != nodes[b]["path"] for a, b in calls if a in go_ids and b in go_ids)
    for a, b in calls:  # a flow never crosses languages
        assert nodes[a]["path"].rsplit(".", 1)[-1] == nodes[b]["path"].rsplit(".", 1)[-1], (a, b)


def test_search_finds_an_env_var_in_config_files(polyglot_repo):
    repo, _ = polyglot_repo
    hits = json.loads(cg_command("search", "STRIPE_WEBHOOK_SECRET", "--json", "--limit", "5", cwd=repo).stdout)
    compose = hits[0]  # the section that sets it; `${STRIPE_WEBHOOK_SECRET}` elsewhere only mentions it
    assert (compose["id"], compose["kind"]) == ("deploy/docker-compose.yml::services", "config")
    assert (compose["start_line"], compose["end_line"]) == (1, 13)
    # then the other places that write the exact string (`${STRIPE_WEBHOOK_SECRET}`, a key naming it),
    # ahead of code that only shares the words "stripe webhook secret"
    assert {h["id"] for h in hits[1:3]} == {
        "billing-java/src/main/resources/application.yaml::stripe",
        "payments-web/package.json::config",
    }
