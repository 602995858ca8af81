"""An event as the control plane shows it: its Event Quality Score with the seven dimensions
(docs/events.md), the consumers' contracts on it, and its latest windows' runs."""

from __future__ import annotations

from typing import Any

from assay.web.plane import NotFound, Plane


def event(plane: Plane, name: str) -> dict[str, Any]:
    from assay.platform.events.score import event_score

    found = plane.events()
    if name not in found:
        raise NotFound(f"no event {name!r}")
    spec = found[name]
    contracts = [c for e in found.values() for c in e.contracts]
    score = event_score(plane.store, plane.root, name, now=plane.clock(), contracts=contracts)
    runs, _ = plane.store.run_page(dataset=name, limit=10)
    return {
        "event": name,
        "description": spec.description,
        "producer": spec.producer,
        "tier": spec.tier,
        "tags": list(spec.tags),
        "window": spec.grain,
        "schedule": spec.schedule,
        "score": score,
        "contracts": [
            {
                "consumer": item.contract.id,
                "document": plane.relative(item.file),
                "requirements": [r.name for r in item.contract.requirements()],
            }
            for item in spec.contracts
        ],
        "recent_runs": [r.to_dict() for r in runs],
        "incidents": [
            i.to_dict() for i in plane.store.incidents(dataset=name, states=["open", "acknowledged", "muted"])
        ],
    }
