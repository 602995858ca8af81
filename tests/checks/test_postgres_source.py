"""A ``postgres`` source: the profile's one query runs inside a real PostgreSQL server, and a
server that stops is a system error, retried with each attempt recorded."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from _invoke import assay
from assay.platform.checks.document import load_document
from assay.platform.runs.check import run_document
from assay.store import MetricStore
from assay.workspace import Workspace
from pgserver import PostgresServer

DOC = """\
apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: wh.trades
  source: {{postgres: {{url: "{url}", table: public.trades}}}}
  owners: {{team: wh-data}}
  retry: {{attempts: 1}}
profiles:
  - id: daily
    slice: {{column: trade_date}}
    dimensions: [region]
    metrics:
      - row_count
      - sum: [amount]
      - count_where: {{name: negative, condition: "amount < 0", sample_rows: 2}}
expectations:
  - {{id: rows, metric: daily.row_count, expect: "> 0", severity: critical}}
  - {{id: by-region, metric: daily.row_count, by: [region], expect: "> 0"}}
  - {{id: no-negative, metric: daily.negative, expect: "= 0"}}
  - {{id: complete, rule: 'IsComplete "region"'}}
"""


@pytest.fixture(scope="module")
def server() -> Iterator[PostgresServer]:
    server = PostgresServer.start()  # its own: these tests stop it
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def world(server: PostgresServer, tmp_path: Path) -> Path:
    url = server.create_database().replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(url) as connection:
        connection.execute(
            "CREATE TABLE trades (id int, trade_date date, region text, amount numeric(12, 2))"
        )
        connection.execute(
            "INSERT INTO trades VALUES (1, '2026-11-01', 'EU', 10), (2, '2026-11-01', 'US', 20), "
            "(3, '2026-11-02', 'EU', -5), (4, '2026-11-02', 'US', 7), (5, '2026-11-02', 'US', -1)"
        )
    (tmp_path / "checks").mkdir()
    doc = tmp_path / "checks" / "trades.yaml"
    doc.write_text(DOC.format(url=url))
    # the workspace's admin declares the server (docs/checks.md, "Where a source may be")
    (tmp_path / "assay.yaml").write_text(f"sources:\n  servers: ['127.0.0.1:{server.port}']\n")
    return doc


def run(doc: Path, day: str, *extra: str) -> tuple[int, dict[str, object]]:
    out = doc.parent.parent / "run.json"
    code = assay(
        "check",
        "run",
        str(doc),
        "--at",
        day,
        "--workspace",
        str(doc.parent.parent),
        "--json",
        str(out),
        *extra,
    )
    return code, json.loads(out.read_text())


def test_the_profile_is_measured_in_one_query_inside_postgresql(world: Path) -> None:
    code, first = run(world, "2026-11-01")
    assert code == 0 and first["state"] == "completed" and first["queries"] == {"measure": 1, "judge": 0}
    code, second = run(world, "2026-11-02")
    outcomes = {(o["expectation"], json.dumps(o["group"])): o for o in second["outcomes"]}  # type: ignore[union-attr]
    assert outcomes[("rows", "null")]["observed"] == 3
    assert outcomes[("by-region", '{"region": "US"}')]["observed"] == 2
    negative = outcomes[("no-negative", "null")]
    assert negative["outcome"] == "failed" and negative["observed"] == 2
    assert sorted(row["id"] for row in negative["samples"]) == [3, 5]
    assert outcomes[("complete", "null")]["outcome"] == "passed"


def test_a_stopped_server_is_retried_then_a_system_error(world: Path, server: PostgresServer) -> None:
    assert run(world, "2026-11-01")[0] == 0
    server.pause()
    try:
        code, payload = run(world, "2026-11-02", "--retries", "2", "--backoff", "0")
    finally:
        server.resume()
    assert code == 3 and payload["state"] == "system_error"
    attempts = payload["attempts"]
    assert [a["attempt"] for a in attempts] == [1, 2, 3]  # type: ignore[index]
    assert all(f"127.0.0.1:{server.port}" in a["error"] for a in attempts)  # type: ignore[union-attr]
    outcomes = payload["outcomes"]
    assert {(o["outcome"], o["owner"], o["attempts"]) for o in outcomes} == {("system_error", "platform", 3)}  # type: ignore[union-attr]
    with MetricStore.open(workspace=world.parent.parent) as store:
        run_record = store.run(str(payload["run_id"]))
        assert run_record is not None and run_record.state == "system_error"
        history = store.check_runs("wh.trades")
    assert [r["state"] for r in history] == ["completed", "system_error"]


def test_a_server_back_before_the_next_attempt_completes_the_run(world: Path, server: PostgresServer) -> None:
    document = load_document(world)
    server.pause()
    resumed = []

    def wait(seconds: float) -> None:  # the backoff: the server comes back meanwhile
        resumed.append(seconds)
        server.resume()

    try:
        with MetricStore.open(workspace=world.parent.parent) as store:
            result = run_document(
                document, world, at="2026-11-01", store=store, workspace=Workspace(world.parent.parent),
                retries=3, backoff=0.5, sleep=wait,
            )  # fmt: skip
    finally:
        if not resumed:
            server.resume()
    assert resumed == [0.5]
    assert result.state == "completed"
    assert [a.attempt for a in result.attempts] == [1, 2] and result.attempts[0].error
    assert {o["attempts"] for o in result.outcomes} == {2}
    assert {o["outcome"] for o in result.outcomes} == {"passed"}
