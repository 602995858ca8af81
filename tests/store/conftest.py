"""Fixtures of the metric store tests: every test that takes ``store`` runs on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.store import MetricStore
from pgserver import postgres_server, postgres_url  # noqa: F401

BACKENDS = ("sqlite", "postgres")


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of a fresh, empty store on each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'assay.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def store(store_url: str) -> Iterator[MetricStore]:
    """An open store on each backend."""
    with MetricStore.open(store_url) as opened:
        yield opened
