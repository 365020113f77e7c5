"""Fixtures of the ingest tests."""

from __future__ import annotations

import pytest

from tests.ingest.crashes import Clean, make_clean


@pytest.fixture(scope="session")
def clean(tmp_path_factory):
    """Clean indexes of the shop before and after the edit, per backend and resolver, made once."""
    made: dict[tuple[str, bool, str], Clean] = {}
    tmp = tmp_path_factory.mktemp("clean")

    def get(backend: str, edited: bool, resolver: str = "name") -> Clean:
        key = (backend, edited, resolver)
        if key not in made:
            made[key] = make_clean(tmp, backend, edited, resolver)
        return made[key]

    return get
