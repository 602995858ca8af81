"""One failure seen in bronze, silver and gold: one incident with three layers, and each
dataset's owners told once (bronze's that it opened, silver's and gold's that it is upstream of
them), delivered to a real local HTTP receiver; on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from _invoke import assay
from _receivers import Receiver
from assay.platform.checks.document import load_document
from assay.platform.entries import Filters, refresh_stale
from assay.platform.incidents import resolve
from assay.store import MetricStore
from routing._chain import LAYERS, Chain


@pytest.fixture(params=("sqlite", "postgres"))
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'assay.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


def test_one_failure_through_three_layers_is_one_incident_told_once_to_each_owner(
    tmp_path: Path, receiver: Receiver, store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    chain = Chain(tmp_path / "ws", receiver, store_url)
    incident = chain.fail_on_one_day(capsys)
    shown = ["incidents", "show", incident.id[:8], "--workspace", str(chain.root), "--store", store_url]
    assert assay(*shown, "--json") == 0
    layers = json.loads(capsys.readouterr().out)["incident"]["layers"]
    assert sorted(la["dataset"] for la in layers) == ["bronze.orders", "gold.orders", "silver.orders"]
    # the next day bronze is fixed and silver and gold still fail: the incident stays open
    for day in (4, 5):
        chain.check(capsys, "bronze", day, 6, rows=9)
        chain.check(capsys, "silver", day, 7, rows=9)
    chain.check(capsys, "gold", 4, 8, rows=2)
    with MetricStore.open(store_url) as store:
        assert store.incident(incident.id).state == "open"
    # gold passes twice in a row too: every layer has passed twice, the incident resolves
    chain.check(capsys, "gold", 5, 8, rows=9)
    chain.check(capsys, "gold", 6, 8, rows=9)
    with MetricStore.open(store_url) as store:
        assert store.incident(incident.id).state == "resolved"
        assert len(store.incidents()) == 1
    chain.deliver(capsys, "2026-11-06T10:00:00Z")
    assert [b["kind"] for b in chain.got("bronze")] == ["incident_opened", "incident_resolved"]
    assert [b["kind"] for b in chain.got("silver")] == ["downstream_incident"]
    assert json.dumps(chain.got("gold")).count("downstream_incident") == 1


def test_owners_downstream_hear_at_the_opening_and_a_later_upstream_failure_joins_as_a_layer(
    tmp_path: Path, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    chain = Chain(tmp_path / "ws", receiver, f"sqlite:///{tmp_path / 'assay.db'}")
    for layer in LAYERS:  # a passing day: the graph learns what each document declares
        chain.check(capsys, layer, 2, 6, rows=9)
    # bronze fails first: silver's and gold's owners hear of it at once, before their own runs
    chain.check(capsys, "bronze", 3, 6, rows=2)
    chain.deliver(capsys, "2026-11-03T06:30:00Z")
    assert [b["kind"] for b in chain.got("silver")] == ["downstream_incident"]
    assert [b["kind"] for b in chain.got("gold")] == ["downstream_incident"]
    chain.check(capsys, "silver", 3, 7, rows=2)  # silver's own failure: a layer, not told again
    with MetricStore.open(chain.store) as store:  # fixed by hand, as a user resolves it
        [first] = store.incidents()
        resolve(
            store, first.id, by="ana", cause="real_issue", note=None, now=datetime(2026, 11, 4, tzinfo=UTC)
        )
    # the other way round: gold fails on day 10 before bronze does, and bronze joins gold's incident
    chain.check(capsys, "gold", 10, 6, rows=2)
    chain.check(capsys, "bronze", 10, 7, rows=2)
    chain.deliver(capsys, "2026-11-10T08:00:00Z")
    with MetricStore.open(chain.store) as store:
        first, later = sorted(store.incidents(), key=lambda i: i.opened_at)
        assert {la.dataset for la in store.incident_layers(first.id)} == {"bronze.orders", "silver.orders"}
        assert later.dataset == "gold.orders"
        assert {la.dataset for la in store.incident_layers(later.id)} == {"bronze.orders", "gold.orders"}
    assert [b["kind"] for b in chain.got("silver")] == ["downstream_incident"]
    assert [(b["kind"], b["incident_id"]) for b in chain.got("gold")] == [
        ("downstream_incident", first.id),
        ("incident_opened", later.id),
    ]
    bronze = [(b["kind"], b["dataset"], b["incident_id"]) for b in chain.got("bronze")]
    assert bronze == [
        ("incident_opened", "bronze.orders", first.id),
        ("incident_resolved", "bronze.orders", first.id),
        ("incident_opened", "bronze.orders", later.id),  # its layer of gold's incident, told once
    ]


def test_a_dry_run_and_an_advisory_expectation_join_nothing_and_tell_no_one(
    tmp_path: Path, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    chain = Chain(tmp_path / "ws", receiver, f"sqlite:///{tmp_path / 'assay.db'}")
    silver = chain.root / "checks" / "silver.yaml"
    silver.write_text(silver.read_text().replace("severity: error}", "severity: error, mode: advisory}"))
    for layer in LAYERS:  # the graph learns each document's upstream on a passing day
        chain.check(capsys, layer, 2, 6, rows=9)
    chain.check(capsys, "bronze", 3, 6, rows=2)
    chain.check(capsys, "silver", 3, 7, rows=2)  # advisory: evaluated and kept only
    chain.check(capsys, "gold", 3, 8, 2, "--dry-run")  # a dry run commits nothing
    chain.deliver(capsys, "2026-11-03T10:00:00Z")
    with MetricStore.open(chain.store) as store:
        [incident] = store.incidents()
        assert [la.dataset for la in store.incident_layers(incident.id)] == ["bronze.orders"]
    # their owners heard of bronze's incident when it opened, as downstream owners do, and
    # neither their advisory failure nor their dry run told them again
    for layer in ("silver", "gold"):
        assert [b["kind"] for b in chain.got(layer)] == ["downstream_incident"]


def _open_counts(chain: Chain, now: datetime) -> dict[str, int]:
    """Each dataset's open incidents as its kept catalog entry says, after a refresh of the stale."""
    documents = {}
    for path in (chain.root / "checks").glob("*.yaml"):
        document = load_document(path)
        documents[document.dataset.name] = (path, document)
    with MetricStore.open(chain.store) as store:
        refresh_stale(store, documents, now=now)
        _, kept = store.catalog_page(Filters(), sort="name", descending=False, offset=0, limit=10)
        from_scratch = store.activity()
    counts = {e.name: e.open_incidents for e in kept}
    assert counts == {name: a.open_incidents for name, a in from_scratch.items()}
    return counts


def test_a_dataset_that_is_a_layer_counts_the_incident_wherever_its_incidents_are_asked_for(
    tmp_path: Path, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    """Gold's owners, told of bronze's incident, find it under gold: in ``incidents list
    --dataset``, on the catalog (its open incidents) and to the Airflow sensor (the same store
    query); resolved on bronze, it leaves gold's count too."""
    chain = Chain(tmp_path / "ws", receiver, f"sqlite:///{tmp_path / 'assay.db'}")
    incident = chain.fail_on_one_day(capsys)
    where = ("--workspace", str(chain.root), "--store", chain.store)
    assert (
        assay("incidents", "list", "--dataset", "gold.orders", "--status", "unresolved", "--json", *where)
        == 0
    )
    assert [i["id"] for i in json.loads(capsys.readouterr().out)["incidents"]] == [incident.id]
    day = datetime(2026, 11, 3, 12, tzinfo=UTC)
    assert _open_counts(chain, day) == {"bronze.orders": 1, "silver.orders": 1, "gold.orders": 1}
    with MetricStore.open(chain.store) as store:
        resolve(store, incident.id, by="ana", cause="real_issue", note=None, now=day)
    assert _open_counts(chain, day) == {"bronze.orders": 0, "silver.orders": 0, "gold.orders": 0}
