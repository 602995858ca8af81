"""Fixtures of the notification tests: a real local HTTP receiver and a real local SMTP server."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from aiosmtpd.controller import Controller

from _receivers import Mailbox, Receiver
from pgserver import postgres_server, postgres_url  # noqa: F401


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.stop()


@pytest.fixture
def mailbox() -> Iterator[tuple[Mailbox, int]]:
    box = Mailbox()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(box, hostname="127.0.0.1", port=port)
    controller.start()
    yield box, port
    controller.stop()
