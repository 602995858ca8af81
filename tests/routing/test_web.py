"""The web shows lineage: an incident's page and JSON hold its layers and its dataset's upstream
and downstream datasets (links), a dataset's page its own; each route asks for a viewer, as the
others do."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from _receivers import Receiver
from assay.web.app import create_app
from assay.web.plane import Plane, Settings
from routing._chain import LAYERS, Chain


def test_the_incident_and_the_dataset_pages_show_layers_upstream_and_downstream(
    tmp_path: Path, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "ws"
    chain = Chain(root, receiver, f"sqlite:///{root / 'assay.db'}")
    for hour, layer in enumerate(LAYERS, start=6):
        chain.check(capsys, layer, 3, hour, rows=2)
    plane = Plane(Settings(root, now=datetime(2026, 11, 3, 12, tzinfo=UTC)))
    try:
        token = plane.store.add_user("viewer", "viewer", by="tests")
        [incident] = plane.store.incidents()
        with TestClient(create_app(plane=plane), follow_redirects=False) as client:
            assert client.get(f"/api/v1/incidents/{incident.id}").status_code == 401
            assert client.get("/api/v1/datasets/silver.orders").status_code == 401
            headers = {"authorization": f"Bearer {token}"}
            found = client.get(f"/api/v1/incidents/{incident.id}", headers=headers).json()
            assert sorted(la["dataset"] for la in found["layers"]) == [f"{n}.orders" for n in sorted(LAYERS)]
            assert (found["upstream"], found["downstream"]) == ([], ["silver.orders", "gold.orders"])
            silver = client.get("/api/v1/datasets/silver.orders", headers=headers).json()
            assert (silver["upstream"], silver["downstream"]) == (["bronze.orders"], ["gold.orders"])
            page = client.get(f"/incidents/{incident.id}", headers=headers)
            assert page.status_code == 200, page.text
            assert '<a href="/datasets/gold.orders">gold.orders</a>' in page.text
            assert "<h2>Layers</h2>" in page.text
            page = client.get("/datasets/gold.orders", headers=headers)
            assert page.status_code == 200, page.text
            assert (
                '<a href="/datasets/silver.orders">silver.orders</a>, <a href="/datasets/bronze.orders">'
                in page.text
            )
    finally:
        plane.close()
