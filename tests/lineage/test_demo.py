"""`assay demo` writes the OpenLineage events of its DQDL run to a file it names (issue 32)."""

from __future__ import annotations

import json

from _demo_workspace import built
from lineage._openlineage import problems


def test_the_demo_names_the_file_of_one_runs_events() -> None:
    demo, printed = built()
    events_file = demo / "lineage" / "orders.jsonl"
    assert printed["orders"]["openlineage"] == str(events_file)
    story = (demo / "story.txt").read_text()
    assert "The OpenLineage events of this run" in story and str(events_file) in story
    events = [json.loads(line) for line in events_file.read_text().splitlines()]
    assert [e["eventType"] for e in events] == ["START", "COMPLETE"]
    assert [problems(e) for e in events] == [[], []]
    # the orders, with what was found in them, and the customers its rules join
    read, customers = events[1]["inputs"]
    assert read["name"] == str(demo / "data" / "orders.csv")
    assert customers["name"] == str(demo / "data" / "customers.csv") and not customers.get("inputFacets")
    assertions = read["inputFacets"]["dataQualityAssertions"]["assertions"]
    # one assertion per rule the demo's ruleset judged, as many failing as the story tells
    judged = [r for r in printed["orders"]["outcomes"].items() if r[0] in ("Passed", "Failed")]
    assert len(assertions) == sum(n for _, n in judged)
    assert sum(1 for a in assertions if not a["success"]) == printed["orders"]["outcomes"]["Failed"]
