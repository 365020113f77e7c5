"""The repository key: the same for one repository on every machine, different between repositories,
never carrying a credential; flags and CG_REPO_KEY win over the default."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cg.config import ConfigError, load_settings, normalise_remote, repo_key_for


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("git@github.com:acme/shop.git", "github.com/acme/shop"),
        ("https://github.com/acme/shop.git", "github.com/acme/shop"),
        ("https://github.com/acme/shop", "github.com/acme/shop"),
        ("https://GitHub.com/acme/shop/", "github.com/acme/shop"),
        ("ssh://git@github.com:22/acme/shop.git", "github.com/acme/shop"),
        ("https://ci-bot:ghp_s3cr3tT0k3n@github.com/acme/shop.git", "github.com/acme/shop"),
        ("https://oauth2:glpat-abc@gitlab.example.com:8443/payments/ledger.git", "gitlab.example.com/payments/ledger"),
        ("/srv/git/invoices.git", "srv/git/invoices"),
        ("file:///srv/git/invoices.git", "srv/git/invoices"),
    ],
)
def test_remote_urls_normalise_to_one_key(url, key):
    assert normalise_remote(url) == key
    assert "s3cr3t" not in normalise_remote(url) and "glpat" not in normalise_remote(url)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def test_the_default_key_is_the_origin_remote_on_every_clone(tmp_path):
    laptop, ci = tmp_path / "laptop" / "shop", tmp_path / "ci-runner" / "checkout-7f3a"
    for clone, url in ((laptop, "git@github.com:acme/shop.git"), (ci, "https://ci:t0ken@github.com/acme/shop")):
        clone.mkdir(parents=True)
        _git(clone, "init", "-q")
        _git(clone, "remote", "add", "origin", url)
    assert repo_key_for(laptop) == repo_key_for(ci) == "github.com/acme/shop"
    (laptop / "services" / "billing").mkdir(parents=True)  # a monorepo's part is a repository of its own
    assert repo_key_for(laptop / "services" / "billing") == "github.com/acme/shop/services/billing"


def test_without_a_remote_the_directory_names_the_repository(tmp_path):
    (tmp_path / "invoices").mkdir()
    (tmp_path / "coupons").mkdir()
    _git(tmp_path / "coupons", "init", "-q")
    assert repo_key_for(tmp_path / "invoices") == "invoices"
    assert repo_key_for(tmp_path / "coupons") == "coupons"


def test_the_setting_and_the_flag_win(tmp_path, monkeypatch):
    monkeypatch.delenv("CG_REPO_KEY", raising=False)
    assert load_settings(tmp_path).repo_key == tmp_path.name
    monkeypatch.setenv("CG_REPO_KEY", "acme/payments@release-2.4")
    assert load_settings(tmp_path).repo_key == "acme/payments@release-2.4"
    assert load_settings(tmp_path, repo_key="acme/webhooks").repo_key == "acme/webhooks"
    with pytest.raises(ConfigError, match="printable"):
        load_settings(tmp_path, repo_key="shop\nMATCH (n) DETACH DELETE n")
