"""What the sensor and its trigger wait on: a dataset's unresolved incidents (open,
acknowledged or muted; those it is a layer of too), optionally of one expectation or one incident
id, read from the store as ``assay incidents list --dataset`` reads them."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from assay.workspace import Workspace, store_url

UNRESOLVED = ("open", "acknowledged", "muted")  # every state but resolved (assay incidents list)


@dataclass(frozen=True)
class Wait:
    """One wait's question: the dataset, and optionally one expectation or incident id in it;
    the workspace and the store as the commands name them (None: their defaults)."""

    dataset: str
    expectation: str | None = None
    incident: str | None = None
    workspace: str | None = None
    store: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def unresolved(self) -> list[dict[str, Any]]:
        """The incidents still unresolved, each as ``id``, ``expectation``, ``state``; an incident id
        matches by its prefix, as ``assay incidents`` commands take it."""
        from assay.store import MetricStore

        space = Workspace(self.workspace)
        with MetricStore.open(store_url(self.store), workspace=space.root) as metric_store:
            found = metric_store.incidents(dataset=self.dataset, states=list(UNRESOLVED), layers=True)
        return [
            {"id": i.id, "expectation": i.expectation, "state": i.state}
            for i in found
            if (self.expectation is None or i.expectation == self.expectation)
            and (self.incident is None or i.id.startswith(self.incident))
        ]

    def describe(self, unresolved: list[dict[str, Any]]) -> str:
        """Why the wait is not over, in words that name the incidents."""
        what = self.dataset + (f" ({self.expectation})" if self.expectation else "")
        shown = ", ".join(f"{i['id'][:8]} {i['expectation']} {i['state']}" for i in unresolved)
        return f"{what} still has {len(unresolved)} unresolved incident(s): {shown}"
