"""The demo's webhook receiver: a real HTTP server on 127.0.0.1 that keeps every POST it gets,
so that the demo can show what its scheduled week sent (and to which channel)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


class WebhookReceiver:
    """``with WebhookReceiver() as receiver:`` — ``receiver.url`` takes POSTs on any path;
    ``receiver.received`` holds each as ``{"path", "idempotency_key", "body"}``, in order."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        keep = self.received
        lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    payload = json.loads(body)
                except ValueError:
                    payload = {"unreadable": body.decode(errors="replace")}
                with lock:
                    keep.append(
                        {
                            "path": self.path,
                            "idempotency_key": self.headers.get("Idempotency-Key"),
                            "body": payload,
                        }
                    )
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:  # the demo prints what it received itself
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> WebhookReceiver:
        self.thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.server.shutdown()
        self.server.server_close()
