"""Authors saving the same check document at once, against a real server: every save answered
201 is in the document, every other one is a 409 that says why, the audit trail lists exactly
the 201s, and no temporary file is left. And the document's writer itself, from several
processes at once: no addition is lost (docs/web.md, "Add a check"). On SQLite and on a
PostgreSQL store (the audit trail's)."""

from __future__ import annotations

import json
import multiprocessing
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml

from _demo_workspace import copy
from assay.platform.checks.edit import add_expectations
from pgserver import postgres_server, postgres_url  # noqa: F401
from web.browser import served
from web.conftest import open_plane, users_of

DATASET = "payments.trades"
AUTHORS = 4
ROUNDS = 6


def _expectation(eid: str) -> str:
    return yaml.safe_dump({"id": eid, "rule": "RowCount > 0", "profile": "daily", "severity": "warning"})


@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
def test_concurrent_saves_keep_every_save_answered_201(
    tmp_path: Path, store: str, request: pytest.FixtureRequest
) -> None:
    root = copy(tmp_path / "assay-demo")
    url = request.getfixturevalue("postgres_url") if store == "postgresql" else None
    plane = open_plane(root, url)
    token = users_of(plane)["author"]
    document = root / "checks" / "trades.yaml"
    before = {e["id"] for e in yaml.safe_load(document.read_text())["expectations"]}
    answers: list[tuple[str, int, str]] = []
    together = threading.Barrier(AUTHORS)

    def post(url: str, body: dict[str, str]) -> tuple[int, str]:
        ask = urllib.request.Request(
            url,
            data=json.dumps(body).encode(),
            headers={"authorization": f"Bearer {token}", "content-type": "application/json"},
        )
        try:
            with urllib.request.urlopen(ask, timeout=60) as answer:
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as refused:
            return refused.code, refused.read().decode()

    def author(n: int, url: str) -> None:
        checks = f"{url}/api/v1/datasets/{DATASET}/checks"
        for r in range(ROUNDS):
            eid = f"concurrent-{n}-{r}"
            draft = {"expect": _expectation(eid)}
            base = json.loads(post(f"{checks}/preview", draft)[1])["base"]
            together.wait()  # the saves of a round leave together, most on the same base
            status, text = post(checks, {**draft, "base": base})
            answers.append((eid, status, text))

    try:
        with served(plane) as url:
            threads = [threading.Thread(target=author, args=(n, url)) for n in range(AUTHORS)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        audited = {
            a.target.split("/", 1)[1]
            for a in plane.store.audit_trail(dataset=DATASET, limit=1000, offset=0)[0]
            if a.action == "check.add"
        }
    finally:
        plane.close()
    assert len(answers) == AUTHORS * ROUNDS
    assert {status for _, status, _ in answers} <= {201, 409}, [a for a in answers if a[1] not in (201, 409)]
    saved = {eid for eid, status, _ in answers if status == 201}
    refused = [text for _, status, text in answers if status == 409]
    assert all("changed since its diff was shown" in text for text in refused)
    kept = {e["id"] for e in yaml.safe_load(document.read_text())["expectations"]} - before
    assert kept == saved and audited == saved
    assert len(saved) >= ROUNDS  # a round's first save always finds its base
    assert sorted(p.name for p in document.parent.iterdir() if "partial" in p.name) == []


def _add(path: str, n: int) -> None:
    for r in range(5):
        add_expectations(path, [{"id": f"p{n}-{r}", "rule": "RowCount > 0", "profile": "daily"}])


def test_writers_in_several_processes_lose_no_addition(tmp_path: Path) -> None:
    document = copy(tmp_path / "assay-demo") / "checks" / "trades.yaml"
    before = {e["id"] for e in yaml.safe_load(document.read_text())["expectations"]}
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_add, args=(str(document), n)) for n in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert [w.exitcode for w in workers] == [0, 0, 0, 0]
    kept = {e["id"] for e in yaml.safe_load(document.read_text())["expectations"]} - before
    assert kept == {f"p{n}-{r}" for n in range(4) for r in range(5)}
