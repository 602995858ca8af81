"""Learned lineage: OpenLineage RunEvents posted to ``assay serve``'s ``/api/v1/lineage`` (as
Marquez receives them) make the graph, so the chain's failure is one incident told once to each
owner with no ``upstream`` in any document; a bad event is a 400 naming what is wrong."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from _receivers import Receiver
from assay.web.app import create_app
from assay.web.plane import Plane, Settings
from routing._chain import Chain

SCHEMA = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent"


def event(inputs: list[dict[str, Any]], outputs: list[dict[str, Any]], job: str) -> dict[str, Any]:
    return {
        "eventType": "COMPLETE",
        "eventTime": "2026-11-02T05:00:00.000Z",
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.40.0/integration/spark",
        "schemaURL": SCHEMA,
        "run": {"runId": "0190e0c4-7d1c-7c5e-9d8a-2f4b7e1c9a01", "facets": {}},
        "job": {"namespace": "spark", "name": job, "facets": {}},
        "inputs": inputs,
        "outputs": outputs,
    }


class Served:
    """The chain's workspace served in process, with a token of each role."""

    def __init__(self, chain: Chain) -> None:
        self.plane = Plane(Settings(chain.root, store_url=chain.store, now=datetime(2026, 11, 2, tzinfo=UTC)))
        self.tokens = {r: self.plane.store.add_user(r, r, by="tests") for r in ("viewer", "author")}
        self.client = TestClient(create_app(plane=self.plane), follow_redirects=False)

    def post(self, body: Any, role: str | None = "author", raw: bytes | None = None) -> Any:
        headers = {"authorization": f"Bearer {self.tokens[role]}"} if role else {}
        content = raw if raw is not None else json.dumps(body).encode()
        headers["content-type"] = "application/json"
        return self.client.post("/api/v1/lineage", content=content, headers=headers)


@pytest.fixture
def served(tmp_path: Path, receiver: Receiver) -> Iterator[tuple[Chain, Served]]:
    root = tmp_path / "ws"
    chain = Chain(root, receiver, f"sqlite:///{root / 'assay.db'}", declared=False)
    found = Served(chain)
    with found.client:
        yield chain, found
    found.plane.close()


def test_posted_events_make_the_chain_and_its_failure_is_one_incident(
    served: tuple[Chain, Served], capsys: pytest.CaptureFixture[str]
) -> None:
    chain, server = served
    data = chain.root / "data"
    # a Spark job read bronze's files to write silver's: both named by where they live
    answer = server.post(
        event(
            [{"namespace": "file", "name": str(data / "bronze")}],
            [{"namespace": "file", "name": str(data / "silver"), "facets": {}}],
            "orders.silver",
        )
    )
    assert answer.status_code == 201, answer.text
    assert answer.json() == {
        "job": "spark/orders.silver",
        "edges": [{"upstream": "bronze.orders", "downstream": "silver.orders"}],
        "unmapped": [],
    }
    # a dbt model read silver (a warehouse table whose symlink names assay's dataset) to write gold
    silver = {
        "namespace": "postgres://db:5432",
        "name": "shop.public.silver_orders",
        "facets": {
            "symlinks": {"identifiers": [{"namespace": "assay", "name": "silver.orders", "type": "TABLE"}]}
        },
    }
    lookup = {"namespace": "s3://lookups", "name": "currencies"}
    answer = server.post(event([silver, lookup], [{"namespace": "file", "name": str(data / "gold")}], "gold"))
    assert answer.status_code == 201, answer.text
    assert answer.json()["edges"] == [{"upstream": "silver.orders", "downstream": "gold.orders"}]
    assert answer.json()["unmapped"] == ["s3://lookups/currencies"]
    chain.fail_on_one_day(capsys)


@pytest.mark.parametrize(
    ("raw", "status", "says"),
    [
        (b"not json", 400, "the body is not JSON"),
        (b"[]", 400, "a JSON object, not a list"),
        (
            json.dumps({**event([], [], "j"), "eventTime": "yesterday"}).encode(),
            400,
            "eventTime: Input should be",
        ),
        (json.dumps({**event([], [], "j"), "eventTime": "2026-11-02T05:00:00"}).encode(), 400, "eventTime"),
        (json.dumps({**event([{"name": "x"}], [], "j")}).encode(), 400, "inputs.0.namespace: Field required"),
        (
            json.dumps({**event([], [], "j"), "job": {"name": "j"}}).encode(),
            400,
            "job.namespace: Field required",
        ),
        (json.dumps({**event([], [], "j"), "inputs": [7]}).encode(), 400, "inputs.0: Input should be"),
    ],
)
def test_a_bad_event_is_a_400_naming_what_is_wrong(
    served: tuple[Chain, Served], raw: bytes, status: int, says: str
) -> None:
    _, server = served
    answer = server.post(None, raw=raw)
    assert answer.status_code == status, answer.text
    assert says in answer.text, answer.text
    assert server.plane.store.lineage_edges() == []


def test_only_a_writer_may_post_and_a_body_is_bounded(served: tuple[Chain, Served]) -> None:
    _, server = served
    body = event([{"namespace": "file", "name": "/a"}], [{"namespace": "file", "name": "/b"}], "j")
    assert server.post(body, role=None).status_code == 401
    assert server.post(body, role="viewer").status_code == 403
    many = [{"namespace": "file", "name": f"/{i}"} for i in range(1001)]
    assert server.post(event(many, [], "j")).status_code == 400
    assert server.post(None, raw=b" " * (1024 * 1024 + 1)).status_code == 413


def test_the_documented_event_and_answer_are_what_the_endpoint_takes_and_gives(
    served: tuple[Chain, Served],
) -> None:
    """docs/lineage.md's event.json, posted as its curl example posts it, gets the answer shown."""
    _, server = served
    text = (Path(__file__).parents[2] / "docs" / "lineage.md").read_text()
    raw = re.search(r"```json event\.json\n(.*?)```", text, re.DOTALL)
    shown = re.search(r"--data @event\.json\n(\{.*?\})\n```", text, re.DOTALL)
    assert raw is not None and shown is not None
    answer = server.post(None, raw=raw.group(1).encode())
    assert answer.status_code == 201, answer.text
    assert answer.json() == json.loads(shown.group(1))
