"""Bronze, silver and gold orders in one workspace: a check document each (the same
expectation, their own owners and channel), run by ``assay check run`` as a user runs them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from _invoke import assay
from _receivers import Receiver
from assay.store import MetricStore

DOCUMENT = """apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: {layer}.orders
  source: {{path: "../data/{layer}/*.csv"}}
  owners: {{team: {layer}-team}}
{upstream}
monitor: {{checks: {{volume: false, null_rate: false}}}}
profiles:
  - id: daily
    slice: {{column: day}}
    metrics: [row_count]
expectations:
  - {{id: volume, metric: daily.row_count, expect: "> 5", severity: error}}
notify:
  - {{when: {{outcome: failed}}, to: {layer}_owners}}
"""
LAYERS = ("bronze", "silver", "gold")


class Chain:
    """A workspace with bronze → silver → gold, each its own document and owners' channel."""

    def __init__(self, root: Path, receiver: Receiver, store: str, *, declared: bool = True) -> None:
        self.root, self.receiver, self.store = root, receiver, store
        (root / "checks").mkdir(parents=True)
        channels = "\n".join(f'  {n}_owners: {{type: webhook, url: "{receiver.url}/{n}"}}' for n in LAYERS)
        (root / "assay.yaml").write_text(f"channels:\n{channels}\n")
        for before, layer in zip((None, *LAYERS), LAYERS, strict=False):
            upstream = f"  upstream: [{before}.orders]" if before and declared else ""
            (root / "data" / layer).mkdir(parents=True)
            (root / "checks" / f"{layer}.yaml").write_text(DOCUMENT.format(layer=layer, upstream=upstream))

    def check(
        self, capsys: pytest.CaptureFixture[str], layer: str, day: int, hour: int, rows: int, *more: str
    ) -> None:
        """Run ``layer``'s document on day ``day`` of November 2026 holding ``rows`` rows."""
        at = f"2026-11-{day:02d}"
        lines = "".join(f"{at},{i}\n" for i in range(rows))
        (self.root / "data" / layer / f"{at}.csv").write_text("day,n\n" + lines)
        code = assay(
            "check", "run", str(self.root / "checks" / f"{layer}.yaml"), "--at", at,
            "--now", f"{at}T{hour:02d}:00:00Z", "--workspace", str(self.root), "--store", self.store,
            "--json", "-", *more,
        )  # fmt: skip
        printed = capsys.readouterr().out
        assert code in (0, 1), printed

    def deliver(self, capsys: pytest.CaptureFixture[str], now: str) -> None:
        code = assay("notify", "deliver", "--now", now, "--workspace", str(self.root), "--store", self.store)
        assert code == 0, capsys.readouterr()
        capsys.readouterr()

    def got(self, layer: str) -> list[dict[str, Any]]:
        return [r["body"] for r in self.receiver.requests if r["path"] == f"/{layer}"]

    def fail_on_one_day(self, capsys: pytest.CaptureFixture[str]) -> Any:
        """Every layer fails on 3 November (gold run twice), then one delivery pass: one incident
        with three layers, bronze's owners told it opened, silver's and gold's once that it is
        upstream of them. The incident."""
        for hour, layer in enumerate(LAYERS, start=6):  # each layer's run an hour after the one it reads
            self.check(capsys, layer, 3, hour, rows=2)
        self.check(capsys, "gold", 3, 9, rows=2)  # a re-run tells no one again
        self.deliver(capsys, "2026-11-03T10:00:00Z")
        with MetricStore.open(self.store) as store:
            [incident] = store.incidents()
            layers = store.incident_layers(incident.id)
        assert (incident.dataset, incident.expectation, incident.state) == ("bronze.orders", "volume", "open")
        assert sorted(layer.dataset for layer in layers) == ["bronze.orders", "gold.orders", "silver.orders"]
        [opened] = self.got("bronze")
        assert (opened["kind"], opened["incident_id"]) == ("incident_opened", incident.id)
        for layer in ("silver", "gold"):
            [told] = self.got(layer)
            assert (told["kind"], told["dataset"], told["incident_id"]) == (
                "downstream_incident", f"{layer}.orders", incident.id,
            )  # fmt: skip
            assert told["upstream"] == {
                "incident_id": incident.id,
                "dataset": "bronze.orders",
                "expectation": "volume",
                "dimension": "volume",
                "severity": "error",
                "link": f"/incidents/{incident.id}",
            }
        return incident
