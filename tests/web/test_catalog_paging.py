"""The catalog pages and filters in the store: a page is the slice of the whole ordered list, the
filters (words, owner, tag, tier, score range) are store queries, the page's links keep the
filters, and a page costs as many queries at 60 datasets as at 12 (nothing is read per dataset
beyond the page's)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from assay.store import OutcomeRecord, RunRecord
from assay.web.app import create_app
from assay.web.plane import Plane, Settings
from web.conftest import Api, users_of

NOW = datetime(2026, 12, 1, 6, tzinfo=UTC)
DOCUMENT = """apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: {name}
  source: {{path: "../data/*.parquet"}}
  owners: {{team: {team}}}
  description: The {name} table.
  tier: {tier}
  tags: [{tag}]
"""


def fill(plane: Plane, count: int) -> None:
    """``count`` datasets in three schemas, each with a DQDL run or two (some failing); every
    tenth with a check document naming its owner, tier and tag."""
    import uuid

    store = plane.store
    for i in range(count):
        name = f"s{i % 3}.table{i:03d}"
        for day in range(1 + i % 2):
            at = NOW - timedelta(days=day + 1)
            run_id = str(uuid.uuid4())
            load = store.create_load(name, logical_time=at, run_id=run_id)
            outcome = "failed" if (i + day) % 4 == 0 else "passed"
            store.record_run(
                RunRecord(
                    run_id,
                    "dqdl",
                    name,
                    load,
                    "completed",
                    at,
                    outcomes=[OutcomeRecord("RowCount > 0", outcome)],
                )
            )
        if i % 10 == 0:
            team, tag = f"team{i % 20 // 10}", f"t{i % 30 // 10}"
            text = DOCUMENT.format(name=name, team=team, tier=i % 3, tag=tag)
            (plane.checks / f"{name}.yaml").write_text(text)


@pytest.fixture
def catalog_of(tmp_path: Path) -> Iterator[Any]:
    planes: list[Plane] = []

    def opened(count: int) -> tuple[Plane, Api, TestClient]:
        root = tmp_path / f"w{count}"
        (root / "checks").mkdir(parents=True)
        plane = Plane(Settings(root, store_url=f"sqlite:///{root / 'assay.db'}", now=NOW, page_size=20))
        planes.append(plane)
        fill(plane, count)
        client = TestClient(create_app(plane=plane), follow_redirects=False)
        return plane, Api(client, users_of(plane)["viewer"]), client

    yield opened
    for plane in planes:
        plane.close()


def names(found: Any) -> list[str]:
    return [e["name"] for e in found.json()["items"]]


def test_a_page_is_the_slice_of_the_whole_ordered_list(catalog_of: Any) -> None:
    _, api, _ = catalog_of(45)
    everything = api.get("/catalog", per_page=200).json()
    assert everything["total"] == 45
    for sort, desc in (("name", False), ("score", True), ("tier", False), ("last_run", True)):
        whole = names(api.get("/catalog", sort=sort, desc=desc, per_page=200))
        pages = [names(api.get("/catalog", sort=sort, desc=desc, per_page=10, page=p)) for p in range(1, 6)]
        assert [n for p in pages for n in p] == whole, sort
    scores = [e["score"]["score"] for e in api.get("/catalog", sort="score", per_page=200).json()["items"]]
    assert scores == sorted(scores)


def test_filters_are_answered_by_the_store(catalog_of: Any) -> None:
    plane, api, _ = catalog_of(45)
    assert names(api.get("/catalog", owner="team0")) == ["s0.table000", "s1.table040", "s2.table020"]
    assert names(api.get("/catalog", tag="t1")) == ["s1.table010", "s1.table040"]
    assert names(api.get("/catalog", q="TABLE03 the")) == ["s0.table030"]
    assert names(api.get("/catalog", q="table03")) == sorted(f"s{i % 3}.table{i:03d}" for i in range(30, 40))
    assert names(api.get("/catalog", q="%")) == []  # a LIKE wildcard is a character like any other
    every = sorted(e["score"]["score"] for e in api.get("/catalog", per_page=200).json()["items"])
    cut = every[len(every) // 2]
    low = api.get("/catalog", max_score=cut, per_page=200).json()
    assert low["total"] == sum(1 for s in every if s <= cut) < 45
    assert all(e["score"]["score"] <= cut for e in low["items"])
    high = api.get("/catalog", min_score=cut + 0.01, per_page=200).json()
    assert high["total"] + low["total"] == 45
    assert api.get("/catalog", min_score=101).status_code == 422
    rollups = everything_rollups(api)
    assert {g["group"]: g["datasets"] for g in rollups["schema"]} == {"s0": 15, "s1": 15, "s2": 15}
    # a write changes the kept entries: the rollups (kept by the plane between writes) follow
    plane.store.create_load("s3.new", logical_time=NOW - timedelta(hours=1))
    rollups = everything_rollups(api)
    assert {g["group"]: g["datasets"] for g in rollups["schema"]} == {"s0": 15, "s1": 15, "s2": 15, "s3": 1}


def everything_rollups(api: Api) -> Any:
    return api.get("/catalog", per_page=1).json()["rollups"]


def test_the_page_shows_paging_controls_that_keep_the_filters(catalog_of: Any) -> None:
    _, api, client = catalog_of(45)
    headers = api.headers
    page = client.get("/", params={"q": "table", "sort": "score", "page": 2}, headers=headers)
    assert page.status_code == 200
    assert "Page 2 of 3 (45 in all)" in page.text
    nav = page.text[page.text.index('<nav class="pager"') :]
    assert 'href="/?q=table&amp;sort=score&page=3" rel="next"' in nav[:400], nav[:400]
    assert client.get("/", params={"min_score": "lots"}, headers=headers).status_code == 400


def test_a_page_costs_the_same_queries_at_60_datasets_as_at_12(catalog_of: Any) -> None:
    def statements(count: int) -> int:
        plane, api, _ = catalog_of(count)
        api.get("/catalog", per_page=10)  # the first read computes the entries the fill left stale
        seen: list[str] = []
        engine = plane.store._engine
        listener = lambda *args: seen.append(args[2])  # noqa: E731
        sa.event.listen(engine, "before_cursor_execute", listener)
        try:
            assert len(names(api.get("/catalog", per_page=10, sort="score"))) == 10
        finally:
            sa.event.remove(engine, "before_cursor_execute", listener)
        return len(seen)

    assert statements(60) == statements(12)
