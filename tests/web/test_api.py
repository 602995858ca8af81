"""The JSON API, route by route, on the demo's workspace: what each read returns, who may call
it (401 without credentials, 403 without the role), and what each write does and records.

``test_every_api_route_is_called`` holds the tables below to the application's routes: a route
added without a call here fails it.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from assay.web import api
from assay.web.app import create_app
from web.conftest import Api, open_plane, users_of, with_new_values

DATASET = "payments.trades"
EXPECTATION = "region-volume"

# Every read, with a path that exists in the demo (ids are filled in by the fixtures below).
READS = [
    "/me",
    "/catalog",
    "/datasets/payments.trades",
    "/datasets/payments.trades/quality",
    "/datasets/payments.trades/profile",
    "/datasets/payments.trades/expectations/region-volume",
    "/datasets/payments.trades/audit",
    "/check-types",
    "/datasets/payments.trades/checks/template",
    "/runs",
    "/runs/{run}",
    "/incidents",
    "/incidents/{incident}",
    "/decisions",
    "/proposals",
    "/proposals/{proposal}",
    "/gate/runs",
    "/gate/runs/{gate_run}",
    "/gate/runs/{gate_run}/quarantine.csv",
    "/audit",
]
ADMIN_READS = ["/users"]
EVENT_READS = ["/events/trade_executed.v3"]  # tested on a workspace with an event (below)

# Every write, with the role it needs and a body that would pass validation.
LINEAGE_EVENT = {
    "eventTime": "2026-11-30T05:00:00Z",
    "producer": "https://example.com/etl",
    "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent",
    "run": {"runId": "0190e0c4-7d1c-7c5e-9d8a-2f4b7e1c9a01"},
    "job": {"namespace": "etl", "name": "trades"},
}
WRITES: list[tuple[str, str, str, Any]] = [
    ("post", "/datasets/payments.trades/checks/dry-run", "author", {"expect": "id: x\nrule: RowCount > 0\n"}),
    ("post", "/datasets/payments.trades/checks/preview", "author", {"expect": "id: x\nrule: RowCount > 0\n"}),
    (
        "post",
        "/datasets/payments.trades/checks",
        "author",
        {"expect": "id: x\nrule: RowCount > 0\n", "base": "0" * 64},
    ),
    ("post", "/datasets/payments.trades/runs", "author", {}),
    ("post", "/incidents/{incident}/ack", "author", {}),
    ("post", "/decisions/{decision}/accept", "author", {}),
    ("post", "/decisions/{decision}/reject", "author", {}),
    ("post", "/decisions", "author", {"dataset": "vendor_trades", "status": "accepted"}),
    ("post", "/proposals/{proposal}/accept", "author", {}),
    ("post", "/proposals/{proposal}/reject", "author", {"why": "no"}),
    ("post", "/datasets/vendor_trades/baselines/accept", "author", {"load_date": "2026-11-20"}),
    ("post", "/users", "admin", {"name": "zed", "role": "viewer"}),
    ("patch", "/users/viewer", "admin", {"role": "author"}),
    ("post", "/lineage", "author", LINEAGE_EVENT),
]
PUBLIC = {"/api/v1/openapi.json"}


@pytest.fixture(scope="module")
def ids(as_role: dict[str | None, Api]) -> dict[str, str]:
    """Ids of the demo's records that the paths above name."""
    api = as_role["viewer"]
    runs = api.get("/runs", kind="check", per_page=1).json()["items"]
    gate = [r for r in api.get("/gate/runs", per_page=200).json()["items"] if r["quarantined"]]
    incidents = api.get("/incidents").json()["items"]
    proposals = api.get("/proposals").json()["items"]
    decisions = api.get("/decisions", dataset="vendor_trades").json()["items"]
    return {
        "run": runs[0]["id"],
        "gate_run": gate[0]["id"],
        "incident": incidents[0]["id"],
        "proposal": proposals[0]["id"],
        "decision": str(decisions[0]["id"]),
    }


def _route_pattern(path: str) -> re.Pattern[str]:
    return re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", path) + "$")


def test_every_api_route_is_called() -> None:
    called = [("get", p) for p in READS + ADMIN_READS + EVENT_READS] + [(m, p) for m, p, _, _ in WRITES]
    routes = [r for r in api.router.routes if isinstance(r, APIRoute)]
    assert len(routes) >= 30  # the routers' own tables, not an empty list
    missing = []
    for route in routes:
        pattern = _route_pattern(route.path)
        for method in route.methods:
            if not any(m == method.lower() and pattern.match(p) for m, p in called):
                missing.append(f"{method} /api/v1{route.path}")
    assert not missing, f"API routes no test calls: {missing}"
    # and the OpenAPI schema publishes exactly those routes
    schema = create_app(plane=_NoPlane()).openapi()  # type: ignore[arg-type]
    published = {f"{m.upper()} {p}" for p, ops in schema["paths"].items() for m in ops}
    assert published - {"GET /health"} == {f"{m} /api/v1{r.path}" for r in routes for m in r.methods}


class _NoPlane:
    """Enough of a plane to build the application (no route is called)."""

    settings = None


@pytest.mark.parametrize("path", READS)
def test_every_read_answers_a_viewer(as_role: dict[str | None, Api], ids: dict[str, str], path: str) -> None:
    answer = as_role["viewer"].get(path.format(**ids))
    assert answer.status_code == 200, answer.text
    if path.endswith(".csv"):
        assert answer.headers["content-type"].startswith("text/csv")
    else:
        assert answer.headers["content-type"] == "application/json"


@pytest.mark.parametrize("path", READS + ADMIN_READS)
def test_every_read_refuses_an_anonymous_caller(
    as_role: dict[str | None, Api], ids: dict[str, str], path: str
) -> None:
    answer = as_role[None].get(path.format(**ids))
    assert answer.status_code == 401
    assert answer.json()["status"] == 401
    assert answer.headers["www-authenticate"].startswith("Bearer")


@pytest.mark.parametrize(("method", "path", "role", "body"), WRITES)
def test_every_write_refuses_a_viewer_and_nobody(
    as_role: dict[str | None, Api], ids: dict[str, str], method: str, path: str, role: str, body: Any
) -> None:
    for who, status in ((None, 401), ("viewer", 403)):
        api = as_role[who]
        answer = getattr(api, method)(path.format(**ids), body)
        assert answer.status_code == status, (who, answer.text)
    if role == "admin":
        answer = getattr(as_role["author"], method)(path.format(**ids), body)
        assert answer.status_code == 403
        assert "needs the admin role" in answer.json()["error"]


def test_accepting_a_day_nothing_holds_names_the_held_days(as_role: dict[str | None, Api]) -> None:
    answer = as_role["author"].post("/datasets/vendor_trades/baselines/accept", {"load_date": "2000-01-01"})
    assert 400 <= answer.status_code < 500, answer.text
    error = answer.json()["error"]
    assert "no load held out of its baselines on 2000-01-01" in error and "held loads: 2026-11-" in error


def test_a_wrong_token_is_refused(client: Any) -> None:
    answer = client.get("/api/v1/catalog", headers={"authorization": "Bearer assay_not-a-token"})
    assert answer.status_code == 401
    assert "not valid" in answer.json()["error"]


def test_health_and_the_openapi_schema_need_no_login(client: Any) -> None:
    health = client.get("/health")
    assert health.status_code == 200 and health.json()["status"] == "ok"
    schema = client.get("/api/v1/openapi.json").json()
    assert "/api/v1/catalog" in schema["paths"]
    assert not any(not p.startswith("/api/v1") and p != "/health" for p in schema["paths"])  # no page in it


def test_the_catalog_lists_every_dataset_with_its_score_and_parts(as_role: dict[str | None, Api]) -> None:
    found = as_role["viewer"].get("/catalog").json()
    names = [e["name"] for e in found["items"]]
    assert names == sorted(names) and {"orders", DATASET, "silver.accounts", "vendor_trades"} <= set(names)
    trades = next(e for e in found["items"] if e["name"] == DATASET)
    # the score is assay score's, at the demo's clock: the demo's story says 98.0
    assert trades["score"] == {"score": 98.0, "health": 98.9, "enrichment": 96.7, "importance": 85.7}
    assert trades["badge"] == "certified" and trades["tier"] == 0
    assert trades["owners"]["team"] == "payments-data"
    # the check document's three, and the monitor's: the demo's EU drop took venue XPAR away
    assert trades["open_incidents"] == 4
    assert trades["last_run"]["kind"] == "check" and trades["freshness"]["last_load"] == "2026-11-30"
    assert {g["group"] for g in found["rollups"]["tag"]} == {"domain:payments", "(untagged)"}
    assert {g["group"] for g in found["rollups"]["schema"]} == {"payments", "silver", "(none)"}


def test_the_catalog_filters_sorts_and_pages(as_role: dict[str | None, Api]) -> None:
    api = as_role["viewer"]
    assert [e["name"] for e in api.get("/catalog", q="trades").json()["items"]] == [DATASET, "vendor_trades"]
    assert [e["name"] for e in api.get("/catalog", tag="domain:payments").json()["items"]] == [DATASET]
    assert [e["name"] for e in api.get("/catalog", tier=0).json()["items"]] == [DATASET]
    assert [e["name"] for e in api.get("/catalog", badge="certified").json()["items"]] == [DATASET]
    by_score = [e["score"]["score"] for e in api.get("/catalog", sort="score", desc=True).json()["items"]]
    assert by_score == sorted(by_score, reverse=True)
    first = api.get("/catalog", per_page=3, page=1).json()
    second = api.get("/catalog", per_page=3, page=2).json()
    assert first["total"] == second["total"] == 4 and first["pages"] == 2
    assert len(first["items"]) == 3 and len(second["items"]) == 1
    assert api.get("/catalog", sort="nonsense").status_code == 400
    assert api.get("/catalog", per_page=500).status_code == 422


def test_a_dataset_overview_says_why_and_has_the_checklist(as_role: dict[str | None, Api]) -> None:
    found = as_role["viewer"].get(f"/datasets/{DATASET}").json()
    assert found["why"] == [
        "10 of 12 columns described (-1.3 points)",
        "pass rate 0.98 over 30 days, 3 failed of 187 judged (-0.7 points)",
    ]
    checklist = {c["name"]: c["met"] for c in found["certification"]["checklist"]}
    assert checklist["owner"] and checklist["freshness_check"] and all(checklist.values())
    assert [s["schedule"] for s in found["schedules"]] == ["30 6 * * *"]
    assert [s["expectation"] for s in found["sla"]] == ["fresh", "cert-freshness"]
    assert {i["expectation"] for i in found["incidents"]} == {
        "total-volume",
        "region-volume",
        "settle-after-exec",
        "profile:vanished_value(venue)",
    }


def test_the_quality_tab_groups_expectations_by_dimension_with_strips(as_role: dict[str | None, Api]) -> None:
    found = as_role["viewer"].get(f"/datasets/{DATASET}/quality").json()
    dims = {d["dimension"]: [e["id"] for e in d["expectations"]] for d in found["dimensions"]}
    assert dims["volume"] == ["total-volume", "region-volume", "cert-volume"]
    assert "customer-ref-complete" in dims["completeness"]
    every = {e["id"]: e for d in found["dimensions"] for e in d["expectations"]}
    strip = every["total-volume"]["strip"]
    assert len(strip) == 15 and strip[-1]["outcome"] == "failed"
    assert [c["at"] for c in strip] == sorted(c["at"] for c in strip)
    assert {c["outcome"] for c in every["customer-ref-complete"]["strip"]} == {"config_error"}
    assert every["region-volume"]["failing_groups"] == 1 and every["region-volume"]["mode"] == "enforce"
    assert every["fee-level"]["mode"] == "advisory"
    assert every["email-complete"]["owner"] == "crm-team@example.com"


def test_the_quality_tab_of_a_dqdl_and_a_gate_dataset(as_role: dict[str | None, Api]) -> None:
    api = as_role["viewer"]
    orders = api.get("/datasets/orders/quality").json()
    assert not orders["has_document"] and len(orders["rules"]) == 16
    assert {c["outcome"] for r in orders["rules"] for c in r["strip"]} >= {"passed", "failed"}
    gate = api.get("/datasets/silver.accounts/quality").json()
    rules = {r["rule"]: r for r in gate["gate"]}
    assert {"C01", "T01", "F01"} <= set(rules)
    assert len(rules["C01"]["strip"]) == 15


def test_an_expectation_series_has_its_band_groups_and_evidence(as_role: dict[str | None, Api]) -> None:
    api = as_role["viewer"]
    eu = api.get(f"/datasets/{DATASET}/expectations/{EXPECTATION}", group="region=EU").json()
    assert eu["group"] == {"region": "EU"} and [g["label"] for g in eu["groups"]] == [
        "region=APAC",
        "region=EU",
        "region=US",
    ]
    last = eu["series"][-1]
    assert (last["observed"], last["outcome"]) == (119.0, "failed")
    assert last["low"] == pytest.approx(171.7) and last["high"] == pytest.approx(318.87, abs=0.01)
    assert eu["states"] == {"skipped": 5, "passed": 24, "failed": 1}
    settle = api.get(f"/datasets/{DATASET}/expectations/settle-after-exec").json()
    assert len(settle["evidence"]["samples"]) == 3
    assert settle["evidence"]["samples"][0]["settled_at"] < settle["evidence"]["samples"][0]["executed_at"]
    assert [c["value"] for c in settle["evidence"]["explained_by"]][:1] == ["US"]
    assert api.get(f"/datasets/{DATASET}/expectations/nope").status_code == 404
    assert api.get(f"/datasets/{DATASET}/expectations/{EXPECTATION}", group="region=XX").status_code == 404
    assert api.get(f"/datasets/{DATASET}/expectations/{EXPECTATION}", group="region").status_code == 400


def test_the_profile_shows_columns_value_sets_and_no_decision_for_recurring_ids(
    as_role: dict[str | None, Api],
) -> None:
    found = as_role["viewer"].get(f"/datasets/{DATASET}/profile").json()
    assert found["load"]["logical_date"] == "2026-11-30" and found["load"]["rows"] == 494
    assert {c["column"] for c in found["columns"]} >= {"trade_id", "fee", "region"}
    fee = next(c for c in found["columns"] if c["column"] == "fee")
    assert fee["nulls"] == 5.0
    # the document's monitor: section says customer_id and email recur without being categories
    assert found["decisions"]["total"] == 0
    assert {v["column"] for v in found["value_sets"]} >= {"region", "venue"}
    assert not {v["column"] for v in found["value_sets"]} & {"customer_id", "email"}


def test_the_profile_pages_its_pending_decisions(tmp_path: Path) -> None:
    with with_new_values(tmp_path, codes=25, kinds=3, role="viewer") as (api, dataset):
        found = api.get(f"/datasets/{dataset}/profile", per_page=10, page=3).json()
        assert found["decisions"]["total"] == 28 and found["decisions"]["page"] == 3
        assert len(found["decisions"]["items"]) == 8
        first = api.get(f"/datasets/{dataset}/profile", per_page=10).json()["decisions"]["items"]
        assert len({d["value"] for d in first + found["decisions"]["items"]}) == 18  # no overlap


@pytest.mark.parametrize("name", ["nope", "..", "../../etc/passwd", "a b", "%2e%2e", "x" * 300])
def test_names_that_are_not_datasets_are_404(as_role: dict[str | None, Api], name: str) -> None:
    answer = as_role["viewer"].get(f"/datasets/{name}")
    assert answer.status_code == 404, answer.text


def test_a_name_with_a_nul_is_refused_saying_where(as_role: dict[str | None, Api]) -> None:
    answer = as_role["viewer"].get("/datasets/payments.trades%00")
    assert answer.status_code == 400
    assert "holds U+0000 (a control character) at position 16" in answer.json()["error"]


def test_runs_page_filter_and_detail(as_role: dict[str | None, Api], ids: dict[str, str]) -> None:
    api = as_role["viewer"]
    everything = api.get("/runs", per_page=200).json()
    assert everything["total"] == 160  # 35 of them the vendor's daily profile runs
    checks = api.get("/runs", kind="check").json()
    assert checks["total"] == 30 and {r["kind"] for r in checks["items"]} == {"check"}
    assert all(r["queries"] == {"measure": 1, "judge": 0} for r in checks["items"])
    detail = api.get(f"/runs/{ids['run']}").json()
    assert [s["stage"] for s in detail["stages"]] == ["running", "measured", "judged", "notified"]
    assert len(detail["outcomes"]) == 13
    assert api.get("/runs", kind="nope").status_code == 400
    assert api.get("/runs/not-a-run").status_code == 404
    assert api.get("/runs/00000000-0000-0000-0000-000000000000").status_code == 404


def test_gate_runs_and_their_quarantined_rows(as_role: dict[str | None, Api], ids: dict[str, str]) -> None:
    api = as_role["viewer"]
    found = api.get("/gate/runs", per_page=200).json()
    assert found["total"] == 64
    for r in found["items"]:
        assert r["total"] == r["committed"] + r["quarantined"] + r["held"]
    contributors = {c["contributor"] for c in found["contributors"]}
    assert {"BANK_A", "EASYPAY", "NEWPAY"} <= contributors
    bank_a = api.get("/gate/runs", contributor="BANK_A").json()
    assert bank_a["total"] >= 1 and {r["contributor"] for r in bank_a["items"]} == {"BANK_A"}
    run = api.get(f"/gate/runs/{ids['gate_run']}", per_page=2).json()
    quarantine = run["quarantine"]
    assert quarantine["total"] == run["run"]["quarantined"] and len(quarantine["items"]) == min(
        2, quarantine["total"]
    )
    assert "dq_reasons" in quarantine["columns"]
    download = api.get(f"/gate/runs/{ids['gate_run']}/quarantine.csv")
    rows = list(csv.reader(io.StringIO(download.text)))
    assert len(rows) - 1 == quarantine["total"]
    # the page shows why first (the run's own id aside); the file keeps the quarantine's layout
    assert quarantine["columns"][:3] == ["dq_line", "dq_failed_rules", "dq_reasons"]
    assert set(rows[0]) - {"dq_run_id"} == set(quarantine["columns"])


def test_a_run_without_quarantine_has_no_csv(as_role: dict[str | None, Api]) -> None:
    api = as_role["viewer"]
    clean = next(r for r in api.get("/gate/runs", per_page=200).json()["items"] if not r["quarantined"])
    assert api.get(f"/gate/runs/{clean['id']}/quarantine.csv").status_code == 404
    assert api.get("/gate/runs/../../assay.db/quarantine.csv").status_code == 404


def test_the_check_template_of_every_type(as_role: dict[str | None, Api]) -> None:
    api = as_role["viewer"]
    types = [t["type"] for t in api.get("/check-types").json()["types"]]
    assert types == [
        "freshness",
        "volume",
        "completeness",
        "uniqueness",
        "value_set",
        "range",
        "business_rule",
        "custom",
    ]
    for kind in types:
        found = api.get(f"/datasets/{DATASET}/checks/template", type=kind).json()
        assert found["profile"] == "daily" and found["expect"].startswith("id: ")
    values = api.get(f"/datasets/{DATASET}/checks/template", type="value_set", column="region").json()
    assert 'ColumnValues "region" in ["APAC", "EU", "US"]' in values["expect"]
    rule = api.get(f"/datasets/{DATASET}/checks/template", type="business_rule").json()
    assert "count_where" in rule["measure"] and "settled_at < executed_at" in rule["measure"]
    edit = api.get(f"/datasets/{DATASET}/checks/template", edit="fresh").json()
    assert edit["replacing"] == "fresh" and "freshness(updated_at)" in edit["expect"]
    assert api.get(f"/datasets/{DATASET}/checks/template", type="nope").status_code == 400


def test_the_audit_trail_lists_the_users_added(as_role: dict[str | None, Api]) -> None:
    found = as_role["viewer"].get("/audit").json()
    added = [a for a in found["items"] if a["action"] == "user.add"]
    assert {a["target"] for a in added} == {"viewer", "author", "admin"}
    assert all(a["by"] == "tests" and a["at"] for a in added)


def test_an_api_client_reading_a_dataset_is_one_of_its_readers(
    as_role: dict[str | None, Api], plane: Any
) -> None:
    from datetime import UTC, datetime, timedelta

    before = plane.store.reads_between(
        "vendor_trades", datetime.now(UTC) - timedelta(days=1), datetime.now(UTC)
    )
    for _ in range(3):
        assert as_role["viewer"].get("/datasets/vendor_trades").status_code == 200
    after = plane.store.reads_between(
        "vendor_trades", datetime.now(UTC) - timedelta(days=1), datetime.now(UTC)
    )
    assert [r for r in after if r not in before] == [("api", "viewer")]  # once a day, not per call


def test_an_event_is_in_the_catalog_with_its_quality_score(tmp_path: Any) -> None:
    from datetime import UTC, datetime, timedelta

    from _invoke import assay
    from assay.demo.events import feed, write_contracts

    feed(tmp_path / "events", days=1, per_hour=20)
    contracts = write_contracts(tmp_path / "checks", "../events/*.jsonl")
    at = datetime(2026, 11, 1, 10, tzinfo=UTC)
    for hour in range(2):
        window = at + timedelta(hours=hour)
        done = assay(
            "check", "run", str(contracts), "--at", window.isoformat(),
            "--now", (window + timedelta(hours=1)).isoformat(), "--workspace", str(tmp_path),
        )  # fmt: skip
        assert done == 0
    plane = open_plane(tmp_path)
    viewer = users_of(plane)["viewer"]
    with TestClient(create_app(plane=plane)) as client:
        as_viewer = Api(client, viewer)
        [entry] = [e for e in as_viewer.get("/catalog").json()["items"] if e["kind"] == "event"]
        found = as_viewer.get(EVENT_READS[0])
        assert found.status_code == 200, found.text
        event = found.json()
        assert entry["name"] == event["event"] == "trade_executed.v3"
        assert entry["score"]["score"] == event["score"]["score"]
        assert set(event["score"]["dimensions"]) == {
            "metadata", "freshness", "volume_stability", "delivery_latency", "duplicate_rate",
            "null_density", "adoption",
        }  # fmt: skip
        assert {c["consumer"] for c in event["contracts"]} >= {"risk-analytics"}
        assert len(event["recent_runs"]) == 2
        assert Api(client, None).get(EVENT_READS[0]).status_code == 401
        assert as_viewer.get("/events/nope").status_code == 404
    plane.close()


def test_the_profile_page_shows_dates_and_times_as_such(client: TestClient, tokens: dict[str, str]) -> None:
    # the store keeps a date's bounds as days since 1970 and a timestamp's as seconds
    page = client.get(f"/datasets/{DATASET}/profile", headers={"Authorization": f"Bearer {tokens['viewer']}"})
    assert page.status_code == 200
    rows = {
        m.group(1): m.group(2)
        for m in re.finditer(r'<th scope="row">(\w+)</th>(.*?)</tr>', page.text, flags=re.DOTALL)
    }
    cells = {name: re.findall(r'<td class="num">([^<]*)</td>', row) for name, row in rows.items()}
    assert cells["trade_date"][-2:] == ["2026-11-30", "2026-11-30"]
    low, high = cells["executed_at"][-2:]
    assert re.fullmatch(r"2026-11-30 \d\d:\d\d:\d\d UTC", low) and low <= high
    assert cells["fee"][-2:] == ["0.52", "11.98"]
    # the volume alert is the lead's row count, not said twice
    assert page.text.count("494 rows") == 1


def test_the_quality_tab_shows_a_freshness_as_a_duration(
    as_role: dict[str | None, Api], client: TestClient, tokens: dict[str, str]
) -> None:
    found = as_role["viewer"].get(f"/datasets/{DATASET}/quality").json()
    every = {e["id"]: e for d in found["dimensions"] for e in d["expectations"]}
    assert (every["fresh"]["unit"], every["total-volume"]["unit"]) == ("seconds", None)
    [fresh] = [o for o in every["fresh"]["latest"] if not o.get("group")]
    hours = fresh["observed"] / 3600
    assert 0 < hours < 12  # checked the morning after its day (the profile's lag), so not negative
    page = client.get(f"/datasets/{DATASET}/quality", headers={"Authorization": f"Bearer {tokens['viewer']}"})
    assert page.status_code == 200
    rows = {
        m.group(1): m.group(2)
        for m in re.finditer(
            r'<th scope="row"><a href="[^"]*">([\w-]+)</a>(.*?)</tr>', page.text, flags=re.DOTALL
        )
    }
    observed = re.search(r'<td class="num">.*?<div>([^<]*)</div>', rows["fresh"], flags=re.DOTALL)
    assert observed is not None
    assert re.fullmatch(rf"{int(hours + 1 / 120)} h( \d+ min)?", observed.group(1)), observed.group(1)
    assert "&lt; 12 h" in rows["fresh"]  # the bound too: 43,200 s
    volume = re.search(r'<td class="num">.*?<div>([^<]*)</div>', rows["total-volume"], flags=re.DOTALL)
    assert volume is not None and re.fullmatch(r"[\d,]+", volume.group(1))  # other metrics stay numbers
