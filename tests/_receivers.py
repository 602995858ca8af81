"""Real local receivers for notification tests: an HTTP server that records every POST and
answers from a script per path, and aiosmtpd's SMTP server keeping every message it accepts."""

from __future__ import annotations

import email
import json
import threading
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Receiver:
    """A real HTTP server on 127.0.0.1 that records every POST and answers from ``script``."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.script: dict[str, list[int]] = {}
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": json.loads(body)}
                )
                codes = receiver.script.get(self.path) or [200]
                code = codes.pop(0) if len(codes) > 1 else codes[0]
                self.send_response(code)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Mailbox:
    """aiosmtpd's handler: keeps every message the server accepted."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.messages.append(email.message_from_bytes(envelope.content))
        return "250 OK"


class Listener:
    """A TCP port on 127.0.0.1 that answers nothing and counts who connected to it: proof that a
    refused source was never reached (tests of docs/checks.md, "Where a source may be")."""

    def __init__(self) -> None:
        import socket

        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(8)
        self.socket.setblocking(False)
        self.port: int = self.socket.getsockname()[1]

    def connections(self) -> int:
        """How many connected since the last call (each is closed unanswered)."""
        count = 0
        while True:
            try:
                accepted, _ = self.socket.accept()
            except BlockingIOError:
                return count
            accepted.close()
            count += 1

    def close(self) -> None:
        self.socket.close()
