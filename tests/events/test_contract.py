"""Event contracts as documents: the brief's contract, the shorthand and long forms, several
contracts in a file and across files, and every mistake at once with its file, line and column
(``assay check validate`` as a user runs it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _invoke import assay
from assay.platform.checks.document import is_check_document
from assay.platform.events.document import ContractError, Loaded, is_event_contract, parse_located
from assay.platform.events.event import events, load_contracts, parse_contracts

BRIEF = """apiVersion: assay/v1
kind: EventContract
event: {name: trade_executed.v3, source: {path: "events/*.jsonl"}, key: event_id,
        event_time: event_ts, ingest_time: ingested_at, payload: payload}   # payload: a JSON column
consumer: {team: risk-analytics, contact: "mailto:risk@example.com", tier: 0}
window: {grain: hour}
fields:
  trade_id: {present: true, type: string, non_empty: true}
  amount:   {present: true, type: decimal, range: [0, 1.0e9]}
  currency: {present: true, in: [USD, EUR, GBP, JPY]}
  venue:    {non_empty: true, null_rate_drift: {max_pp: 0.5, vs: "median(last(168))"}}
severity: error
"""

SECOND = """apiVersion: assay/v1
kind: EventContract
event: {name: trade_executed.v3, source: {path: "events/*.jsonl"}, key: event_id,
        event_time: event_ts, ingest_time: ingested_at, payload: payload}
consumer: {team: finance-reporting, tier: 2}
fields:
  venue: {non_empty: {min_rate: 0.5}}
  amount: {type: number, min_rate: 0.99, range: {between: [0, 100], min_rate: 0.9}}
"""


def test_the_briefs_contract_is_its_requirements_each_with_its_stored_metric() -> None:
    [contract] = parse_contracts(BRIEF)
    assert contract.expectation == "contract:risk-analytics" and contract.window.grain == "hour"
    found = [(r.name, r.metric, r.min_rate) for r in contract.requirements()]
    assert found == [
        ("trade_id.present", "present", 1.0),
        ("trade_id.type", "type:string", 1.0),
        ("trade_id.non_empty", "non_empty", 1.0),
        ("amount.present", "present", 1.0),
        ("amount.type", "type:decimal", 1.0),
        ("amount.range", "range:0.0:1000000000.0", 1.0),
        ("currency.present", "present", 1.0),
        ("currency.in", found[7][1], 1.0),
        ("venue.non_empty", "non_empty", 1.0),
        ("venue.null_rate_drift", "null_rate", None),
    ]
    assert found[7][1].startswith("in:")
    [drift] = [r for r in contract.requirements() if r.drift is not None]
    assert (drift.drift.max_pp, drift.drift.vs) == (0.5, "median(last(168))")  # type: ignore[union-attr]


def test_long_forms_tolerances_and_the_same_metric_for_the_same_question() -> None:
    strict, tolerant = parse_contracts(BRIEF + "---\n" + SECOND)
    mine = {r.name: r for r in tolerant.requirements()}
    assert mine["venue.non_empty"].min_rate == 0.5
    assert mine["amount.type"].metric == "type:decimal"  # number is decimal
    assert mine["amount.type"].min_rate == 0.99  # the field's default
    assert mine["amount.range"].min_rate == 0.9  # the requirement's own
    theirs = {r.name: r for r in strict.requirements()}
    # the same question, the same stored metric; different bounds, a different one
    assert theirs["venue.non_empty"].metric == mine["venue.non_empty"].metric
    assert theirs["amount.range"].metric != mine["amount.range"].metric
    # the set is keyed by its values, whatever their order
    reordered = BRIEF.replace("[USD, EUR, GBP, JPY]", "[JPY, GBP, EUR, USD]")
    [again] = parse_contracts(reordered)
    assert {r.metric for r in again.requirements()} == {r.metric for r in strict.requirements()}


def test_the_event_takes_the_most_critical_consumers_tier_unless_it_declares_one() -> None:
    found = events(_loaded(BRIEF + "---\n" + SECOND))
    assert found["trade_executed.v3"].tier == 0
    assert found["trade_executed.v3"].fields == ["trade_id", "amount", "currency", "venue"]
    declared = BRIEF.replace("payload: payload}", "payload: payload, tier: 2}")
    assert events(_loaded(declared))["trade_executed.v3"].tier == 2
    nobody = BRIEF.replace(", tier: 0}", "}")
    assert events(_loaded(nobody))["trade_executed.v3"].tier == 3


def _loaded(text: str) -> list[Loaded]:
    return parse_located(text, file=Path("/tmp/c.yaml"))


def test_every_mistake_of_a_file_is_reported_at_once_with_its_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "events.yaml"
    path.write_text(
        """apiVersion: assay/v1
kind: EventContract
event: {name: e, source: {path: "*.jsonl"}, event_time: ts, colour: red}
consumer: {team: risk}
window: {grain: week}
fields:
  a: {present: maybe, type: strin}
  b: {range: [10, 0], min_rate: 2}
  c: {in: []}
  d: {null_rate_drift: {max_pp: 0.5, vs: "median(last(168)"}}
  e: {}
"""
    )
    assert assay("check", "validate", str(path)) == 2
    lines = capsys.readouterr().err.splitlines()
    where = [line.split(": ", 1)[0] for line in lines[:-1]]
    assert where == [
        f"{path}:{n}" for n in ("3:61", "5:17", "7:16", "7:29", "8:14", "8:33", "9:11", "10:42", "11:6")
    ]
    text = "\n".join(lines)
    for words in (
        "unknown field 'colour'",
        "window.grain: Input should be 'hour' or 'day'",
        "'maybe': write true, false or {min_rate: 0.99}",
        "the low bound 10 is above the high 0",
        "'median(last(168)' is not a number expression over the history",
        "a field needs a requirement",
    ):
        assert words in text
    assert lines[-1] == f"{path}: 9 mistakes; nothing was run"


def test_contracts_of_one_event_in_several_files_must_read_it_the_same_way(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "risk.yaml", tmp_path / "finance.yaml"
    first.write_text(BRIEF)
    second.write_text(
        SECOND.replace("key: event_id", "key: id").replace("team: finance-reporting", "team: risk-analytics")
    )
    assert assay("check", "validate", str(first), str(second)) == 2
    err = capsys.readouterr().err
    assert (
        f"{second}:3:" in err and "key is 'id' here and 'event_id' in the contract at " + f"{first}:3:" in err
    )
    assert "a second contract of consumer risk-analytics" in err
    with pytest.raises(ContractError) as caught:
        load_contracts([first, second])
    assert [p.file for p in caught.value.problems] == [str(second), str(second)]


def test_several_contracts_in_a_file_and_across_files_are_valid_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    both, other = tmp_path / "both.yaml", tmp_path / "other.yaml"
    both.write_text(BRIEF + "---\n" + SECOND)
    other.write_text(BRIEF.replace("trade_executed.v3", "order_placed.v1").replace("risk-analytics", "ops"))
    assert assay("check", "validate", str(both), str(other), "--json") == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["valid"] is True
    assert [(e["event"], [c["consumer"] for c in e["contracts"]]) for e in payload["events"]] == [
        ("trade_executed.v3", ["risk-analytics", "finance-reporting"]),
        ("order_placed.v1", ["ops"]),
    ]
    assert assay("check", "validate", str(both)) == 0
    assert "valid; event trade_executed.v3, 2 contract(s), 13 requirement(s) on 4 field(s)" in " ".join(
        capsys.readouterr().out.split()
    )


def test_kinds_are_told_apart_and_not_mixed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    contract, document = tmp_path / "events.yaml", tmp_path / "orders.yaml"
    contract.write_text(BRIEF)
    document.write_text(
        "apiVersion: assay/v1\nkind: DatasetChecks\ndataset: {name: o, source: {path: o.csv}}\n"
    )
    assert is_event_contract(contract) and not is_event_contract(document)
    assert is_check_document(document) and not is_check_document(contract)
    assert assay("check", "validate", str(document), str(contract)) == 2
    assert "several files at once are event contracts only" in capsys.readouterr().err
    assert assay("check", "validate", str(contract), str(document)) == 2
    assert "kind: 'DatasetChecks' in a file of event contracts" in capsys.readouterr().err
    assert assay("check", "validate", str(contract), str(tmp_path / "nope.yaml")) == 2
    assert "nope.yaml: no such event contract" in capsys.readouterr().err
    broken = tmp_path / "broken.yaml"
    broken.write_text("kind: EventContract\nfields: [\n")
    assert assay("check", "validate", str(broken)) == 2
    assert f"{broken}:3:1: not valid YAML" in capsys.readouterr().err
