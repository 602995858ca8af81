"""``assay serve`` and ``assay users`` as a user runs them: the server in a subprocess on a real
port (its login link, its API, a clean stop), the users commands in process."""

from __future__ import annotations

import http.cookiejar
import json
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from _demo_workspace import cli_env
from _invoke import assay


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serve(workspace: Path, *extra: str) -> tuple[subprocess.Popen[str], int]:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "assay", "serve", "--workspace", str(workspace), "--port", str(port), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
    )
    return process, port


def test_serve_on_an_empty_workspace_prints_a_one_time_login_link(tmp_path: Path) -> None:
    process, port = _serve(tmp_path / "ws")
    try:
        first = process.stdout.readline()  # type: ignore[union-attr]
        login_line = process.stdout.readline()  # type: ignore[union-attr]
        serving = process.stdout.readline()  # type: ignore[union-attr]
        assert first.startswith("no user yet: created the admin 'admin'")
        assert login_line.startswith(f"login: http://127.0.0.1:{port}/login?token=")
        assert serving.startswith(f"serving {tmp_path / 'ws'} at http://127.0.0.1:{port}/")
        link = login_line.removeprefix("login: ").strip()
        health = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/health").read())
        assert health["status"] == "ok"
        jar = http.cookiejar.CookieJar()
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        landed = browser.open(link)
        assert landed.status == 200 and landed.url == f"http://127.0.0.1:{port}/"
        page = landed.read().decode()
        assert "Catalog" in page and 'action="/logout"' in page  # logged in as the admin
        with pytest.raises(urllib.error.HTTPError) as again:
            urllib.request.urlopen(link)  # a second use
        assert again.value.code == 400
        with pytest.raises(urllib.error.HTTPError) as anonymous:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/catalog")
        assert anonymous.value.code == 401
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=60)
    assert code == 0  # SIGTERM stops it cleanly


def test_serve_json_then_a_token_from_users_add_reads_the_api(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = tmp_path / "ws"
    assert (
        assay("users", "add", "ana", "--role", "viewer", "--workspace", str(workspace), "--by", "root") == 0
    )
    token = capsys.readouterr().out.splitlines()[-1]  # the token is the last line
    process, port = _serve(workspace, "--json")
    try:
        started = json.loads(process.stdout.readline())  # type: ignore[union-attr]
        assert started == {"url": f"http://127.0.0.1:{port}/", "workspace": str(workspace), "login": None}
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/v1/me", headers={"Authorization": f"Bearer {token}"}
        )
        assert json.loads(urllib.request.urlopen(request).read())["user"]["name"] == "ana"
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)


def test_serve_on_a_port_in_use_says_so(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "assay", "serve", "--workspace", str(tmp_path), "--port", str(port)],
            capture_output=True,
            text=True,
            env=cli_env(),
            timeout=120,
            check=False,
        )
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: cannot listen on 127.0.0.1:{port}")
    assert "Traceback" not in done.stderr


def test_users_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = str(tmp_path / "ws")
    assert assay("users", "add", "ana", "--role", "author", "--workspace", ws, "--by", "root") == 0
    first = capsys.readouterr().out.splitlines()[-1]
    assert assay("users", "add", "ana", "--workspace", ws) == 2
    assert "exists already" in capsys.readouterr().err
    assert assay("users", "token", "ana", "--workspace", ws, "--by", "root") == 0
    second = capsys.readouterr().out.splitlines()[-1]
    assert second != first and second.startswith("assay_")
    assert assay("users", "set", "ana", "--workspace", ws) == 2
    assert "say what to change" in capsys.readouterr().err
    assert assay("users", "set", "ana", "--disable", "--workspace", ws, "--by", "root") == 0
    assert capsys.readouterr().out == "ana: author, disabled\n"
    assert assay("users", "list", "--workspace", ws, "--json") == 0
    [ana] = json.loads(capsys.readouterr().out)["users"]
    assert (ana["name"], ana["role"], ana["disabled"]) == ("ana", "author", True)
    assert assay("users", "link", "nobody", "--workspace", ws) == 2
    assert "no user 'nobody'" in capsys.readouterr().err
