"""Fixtures of the event contract tests: a real local HTTP receiver for the notifications."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from _receivers import Receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.stop()
