"""A store that fails mid-write: a TCP proxy in front of the session's S3 server forwards every
request whole but the PUT of a run's summary, which it cuts after the first bytes of its body.
The command exits 3 (a system_error) naming the object, nothing is visible under its key, and
``assay recover`` through the working endpoint publishes it once. The proxy synchronizes on bytes
and an event, never on time."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from _invoke import completed
from s3server import S3Bucket


class CuttingProxy:
    """127.0.0.1:port forwarding to ``target``; once the client's bytes hold ``marker`` and then
    the end of its headers, ``body`` more bytes are forwarded and both connections are closed."""

    def __init__(self, target: tuple[str, int], marker: bytes, body: int) -> None:
        self.target, self.marker, self.body = target, marker, body
        self.cut = threading.Event()
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            threading.Thread(target=self._pipe, args=(upstream, client, None), daemon=True).start()
            threading.Thread(target=self._pipe, args=(client, upstream, bytearray()), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, seen: bytearray | None) -> None:
        try:
            while chunk := source.recv(65536):
                if seen is not None:
                    start = len(seen)
                    seen += chunk
                    at = seen.find(self.marker)
                    end = seen.find(b"\r\n\r\n", at) if at >= 0 else -1
                    if end >= 0:
                        sink.sendall(bytes(seen[start : end + 4 + self.body]))
                        self.cut.set()
                        break
                sink.sendall(chunk)
        except OSError:
            pass
        for end in (source, sink):
            end.close()

    def close(self) -> None:
        self.server.close()


@pytest.fixture
def proxy(s3_bucket: S3Bucket) -> Iterator[CuttingProxy]:
    parts = urlsplit(s3_bucket.server.endpoint)
    assert parts.hostname and parts.port
    found = CuttingProxy((parts.hostname, parts.port), f"PUT /{s3_bucket.name}/ws/runs/".encode(), 100)
    yield found
    found.close()


def test_a_summary_cut_mid_upload_is_a_system_error_naming_it_and_leaves_nothing(
    s3_bucket: S3Bucket, proxy: CuttingProxy, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    settings = workspace / "assay.yaml"
    runs = s3_bucket.url("ws/runs")
    settings.write_text(f"storage:\n  endpoint: http://127.0.0.1:{proxy.port}\n  runs: {runs}\n")
    (tmp_path / "r.dqdl").write_text('Rules = [ RowCount = 3, IsComplete "name" ]\n')
    (tmp_path / "d.csv").write_text("name,amount\na,1\nb,2\nc,3\n")
    done = completed(
        "dqdl", "run", str(tmp_path / "r.dqdl"), "--data", str(tmp_path / "d.csv"),
        "--workspace", str(workspace), "--dataset", "shop.orders",
    )  # fmt: skip
    assert proxy.cut.is_set()
    assert done.returncode == 3, done.stderr
    assert f"{runs}/" in done.stderr and ".json: cannot write it" in done.stderr
    run = done.stderr.split(f"{runs}/", 1)[1].split(".json", 1)[0]
    assert s3_bucket.keys("ws/") == []  # nothing partial, nothing at all
    uploads = s3_bucket.server.client().list_multipart_uploads(Bucket=s3_bucket.name)
    assert uploads.get("Uploads", []) == []  # and no unfinished upload left behind
    settings.write_text(f"storage:\n  runs: {runs}\n")  # the store is back (the environment's endpoint)
    recovered = completed("recover", "--workspace", str(workspace), "--json")
    assert recovered.returncode == 0, recovered.stderr
    assert s3_bucket.keys("ws/") == [f"ws/runs/{run}.json"]
    summary = json.loads(s3_bucket.get(f"ws/runs/{run}.json"))
    assert [r["outcome"] for r in summary["rules"]] == ["Passed", "Passed"]
