"""docs/operations.md's "Single machine" and "Workers" commands, read out of the document and run
as written (ports, paths and the store's URL put in for ``$PORT``, ``$WORKSPACE``, ``$STORE_URL``),
so the document cannot drift from what is tested: ``assay serve`` on a PostgreSQL store answers
the catalog's API; four ``assay worker`` processes and one ``assay run --due --queue`` pass run a
morning of 12 due documents, each exactly once (none twice, none lost, counted in the store)."""

from __future__ import annotations

import json
import re
import shlex
import signal
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

from _demo_workspace import cli_env
from assay.store import MetricStore
from checks._due import due_world
from pgserver import free_port, postgres_server, postgres_url  # noqa: F401

DOC = Path(__file__).resolve().parents[2] / "docs" / "operations.md"
DOCUMENTS = 12


def commands(section: str, values: dict[str, str]) -> list[list[str]]:
    """The ``$ `` commands of the console blocks of ``### section`` in docs/operations.md, with
    the placeholders put in, each as a process's arguments (``assay`` as these sources' module)."""
    text = DOC.read_text()
    start = text.index(f"### {section}\n")
    end = re.compile(r"^#{2,4} ", re.MULTILINE).search(text, start + 4)
    body = text[start : end.start() if end else None]
    found = []
    for block in re.findall(r"^```console\n(.*?)^```", body, re.MULTILINE | re.DOTALL):
        for line in block.splitlines():
            if line.startswith("$ "):
                command = line[2:]
                for name, value in values.items():
                    command = command.replace(f"${name}", value)
                words = shlex.split(command)
                assert words[0] == "assay", line
                found.append([sys.executable, "-m", "assay", *words[1:]])
    assert found, f"docs/operations.md's {section!r} shows no command"
    return found


def world(root: Path) -> Path:
    return due_world(root, DOCUMENTS)


def start(command: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env())


def test_the_single_machine_commands_serve_the_catalog(tmp_path: Path, postgres_url: str) -> None:  # noqa: F811
    root = world(tmp_path / "ws")
    port = free_port()
    [serve] = commands(
        "Single machine", {"WORKSPACE": str(root), "STORE_URL": postgres_url, "PORT": str(port)}
    )
    with MetricStore.open(postgres_url, workspace=root) as store:
        token = store.add_user("ops", "viewer", by="tests")
    server = start(serve)
    try:
        assert server.stdout is not None
        assert "serving" in server.stdout.readline()  # printed once it listens
        ask = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/v1/catalog?per_page=5&sort=name",
            headers={"authorization": f"Bearer {token}"},
        )
        with urllib.request.urlopen(ask, timeout=60) as answer:
            catalog = json.load(answer)
        assert catalog["total"] == DOCUMENTS and catalog["pages"] == 3
        assert [e["name"] for e in catalog["items"]] == sorted(f"shop.table{n}" for n in range(DOCUMENTS))[:5]
    finally:
        server.send_signal(signal.SIGTERM)
        _, err = server.communicate(timeout=60)
    assert server.returncode == 0, err


def test_four_workers_run_a_morning_of_due_documents_each_exactly_once(
    tmp_path: Path,
    postgres_url: str,  # noqa: F811
) -> None:
    root = world(tmp_path / "ws")
    found = commands("Workers", {"WORKSPACE": str(root), "STORE_URL": postgres_url})
    worker_commands = [c for c in found if c[3] == "worker"]
    [queue_pass] = [c for c in found if c[3] == "run"]
    assert len(worker_commands) == 4
    workers = [start(c) for c in worker_commands]
    try:
        done = subprocess.run(
            queue_pass, capture_output=True, text=True, env=cli_env(), timeout=300, check=False
        )
        assert done.returncode == 0, done.stderr
        deadline = time.monotonic() + 240
        with MetricStore.open(postgres_url, workspace=root) as store:
            while time.monotonic() < deadline:  # the workers drain the queue: poll the store
                ticks = store.ticks()
                if len(ticks) == DOCUMENTS and all(t.state == "completed" for t in ticks):
                    break
                time.sleep(0.5)
            ticks = store.ticks()
            runs = store.runs(kind="check", limit=1000)
    finally:
        for worker in workers:
            worker.send_signal(signal.SIGTERM)
        errors = [w.communicate(timeout=120)[1] for w in workers]
    assert [w.returncode for w in workers] == [0] * 4, errors
    assert len(ticks) == DOCUMENTS and {t.state for t in ticks} == {"completed"}
    assert Counter(r.dataset for r in runs) == {
        f"shop.table{n}": 1 for n in range(DOCUMENTS)
    }  # none twice, none lost
    assert {t.run_id for t in ticks} == {r.id for r in runs}
