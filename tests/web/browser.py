"""A real headless Chromium for the web tests, driven by Playwright, and the application served to
it on a real port.

Chromium is Debian's (``apt-get install chromium``, as ``.ci/run`` does; ``ASSAY_CHROMIUM`` names
another binary): Playwright cannot download its own browser here, so it is given the path. The
tests fail, never skip, when there is none. The server is uvicorn in a thread of the test process,
on a socket bound and listening before the thread starts: a browser that connects first waits in
the socket's backlog, so no test waits on a clock for the server to be ready.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn

from assay.web.app import create_app
from assay.web.plane import Plane

# What Chromium needs to start here: as root (CI) without its sandbox, and without the
# background connections a closed network refuses (they slow every start).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]


def chromium_path() -> str:
    found = os.environ.get("ASSAY_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        raise RuntimeError(
            "the web tests need Chromium: apt-get install chromium (Debian), or set ASSAY_CHROMIUM "
            "to a Chromium binary (.ci/run installs it)"
        )
    return found


@contextmanager
def served(plane: Plane) -> Iterator[str]:
    """The application of ``plane`` served on a free port of 127.0.0.1; yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    config = uvicorn.Config(create_app(plane=plane), log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


@contextmanager
def browser() -> Iterator[Any]:
    """One headless Chromium (Playwright's sync API)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        opened = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            yield opened
        finally:
            opened.close()


IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
"""Where the tests leave screenshots of the main pages (docs/web.md shows them)."""
