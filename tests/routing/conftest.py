"""Fixtures of the lineage-aware routing tests: a real local HTTP receiver and a real PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from _receivers import Receiver
from pgserver import postgres_server, postgres_url  # noqa: F401


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.stop()
