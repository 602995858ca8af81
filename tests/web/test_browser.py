"""The control plane in a real headless Chromium, on a copy of the demo's workspace: log in, find
a dataset, read its Quality tab and an expectation's chart, add a business rule from a template,
dry-run it (rows shown, store unchanged), save it, run it, work an incident, accept a new value;
a viewer is offered no write and a forged one is refused. Screenshots of the main pages go to
docs/images/ (docs/web.md shows them).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from web.browser import IMAGES, browser, served
from web.conftest import open_plane, users_of

DATASET = "payments.trades"


@pytest.fixture(scope="module")
def site(demo_root: Path) -> Iterator[dict[str, Any]]:
    """The demo's workspace served on a port, its users, and one Chromium for the module."""
    plane = open_plane(demo_root)
    tokens = users_of(plane)
    with served(plane) as base, browser() as chromium:
        yield {"base": base, "tokens": tokens, "plane": plane, "browser": chromium, "root": demo_root}
    plane.close()


@pytest.fixture
def page(site: dict[str, Any]) -> Iterator[Any]:
    """A page of a new browser context (no cookie), that fails the test on a script error or a
    resource that is missing or failed (a 400 or 403 is a refusal the test asked for)."""
    context = site["browser"].new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    problems: list[str] = []
    expected = re.compile(r"status of 40[03] ")
    opened.on("pageerror", lambda error: problems.append(str(error)))
    opened.on(
        "console",
        lambda m: problems.append(m.text) if m.type == "error" and not expected.search(m.text) else None,
    )
    yield opened
    context.close()
    assert not problems, problems


def login(page: Any, site: dict[str, Any], role: str) -> None:
    page.goto(site["base"] + "/")
    assert "/login" in page.url
    page.get_by_label("Your token").fill(site["tokens"][role])
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(site["base"] + "/")


LISTS = {"runs", "gate", "profile", "proposals", "decisions"}
"""Pages whose screenshot is the first screen (a long list's whole page says no more)."""


def shot(page: Any, name: str) -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(IMAGES / f"{name}.png"), full_page=name not in LISTS)


def _dump(root: Path) -> dict[str, list[Any]]:
    with sqlite3.connect(root / "assay.db") as connection:
        tables = [r[0] for r in connection.execute("select name from sqlite_master where type = 'table'")]
        # sessions and reads change as people browse; what a dry run must not touch is the rest
        kept = [t for t in tables if t not in ("web_sessions",)]
        return {t: sorted(connection.execute(f'select * from "{t}"').fetchall(), key=repr) for t in kept}


def test_a_one_time_login_link_logs_in_once(site: dict[str, Any], page: Any) -> None:
    code = site["plane"].store.login_code("admin", by="tests")
    page.goto(f"{site['base']}/login?token={code}")
    page.wait_for_url(site["base"] + "/")
    expect(page.get_by_text("admin (admin)")).to_be_visible()
    page.context.clear_cookies()
    page.goto(f"{site['base']}/login?token={code}")
    assert page.get_by_role("alert").inner_text() == "this login link was used already or has expired"


def test_find_a_dataset_its_quality_tab_and_an_expectation_chart(site: dict[str, Any], page: Any) -> None:
    login(page, site, "author")
    shot(page, "catalog")
    page.get_by_label("Find").fill("trades")
    # htmx replaces the results as the user types: the other datasets go
    results = page.locator("#results")
    results.get_by_role("link", name="orders").wait_for(state="detached")
    expect(results.get_by_role("link", name="vendor_trades")).to_be_visible()
    assert "q=trades" in page.url
    # leaving the field asks nothing more: a second answer's history push would cancel the click
    page.evaluate(
        "window.asked = 0; document.body.addEventListener('htmx:beforeRequest', () => window.asked++)"
    )
    page.get_by_label("Find").blur()
    assert page.evaluate("window.asked") == 0
    results.get_by_role("link", name=DATASET, exact=True).click()
    expect(page.get_by_role("heading", name=DATASET)).to_be_visible()
    expect(page.get_by_text("10 of 12 columns described (-1.3 points)")).to_be_visible()
    shot(page, "dataset")
    page.get_by_role("link", name="Quality").click()
    page.wait_for_url(f"{site['base']}/datasets/{DATASET}/quality")
    volume = page.get_by_role("heading", name="Volume")
    expect(volume).to_be_visible()
    strip = page.get_by_role("list", name=re.compile(r"^total-volume: the latest 15 outcome"))
    assert strip.locator("li").count() == 15
    assert "failed on 2026-11-30" in strip.locator("li").last.inner_text()
    shot(page, "quality")
    page.get_by_role("link", name="region-volume", exact=True).click()
    chart = page.locator(".chart canvas")
    chart.wait_for()  # uPlot drew it from the page's JSON
    page.get_by_label("Group").select_option(label="region=EU")
    page.wait_for_url(re.compile(r"group=region%3DEU"))
    page.locator(".chart canvas").wait_for()
    expect(page.get_by_role("heading", name="History: region=EU")).to_be_visible()
    page.get_by_text("The numbers of the chart").click()
    row = page.get_by_role("row", name=re.compile(r"^2026-11-30 .* failed"))
    assert "119" in row.inner_text()
    shot(page, "expectation")


def test_add_a_business_rule_dry_run_save_and_run_it(site: dict[str, Any], page: Any) -> None:
    login(page, site, "author")
    page.goto(f"{site['base']}/datasets/{DATASET}/quality")
    page.get_by_role("link", name="Add a check").click()
    page.get_by_label("Check type").select_option("business_rule")
    page.get_by_label("Condition").fill("settled_at < executed_at")
    page.get_by_role("button", name="Load the template").click()
    measure = page.get_by_label("What to measure")
    assert "settled_at < executed_at" in measure.input_value()
    wrong = page.get_by_label("What makes it wrong")
    wrong.fill(wrong.input_value().replace("severity: error", "severity: critical"))
    before = _dump(site["root"])
    document = (site["root"] / "checks" / "trades.yaml").read_text()
    page.get_by_role("button", name="Dry run").click()
    flagged = page.locator("#flagged")
    flagged.wait_for()
    assert flagged.locator("tbody tr").count() == 3
    expect(page.get_by_text("It would have failed 0 of 29 judged load(s)")).to_be_visible()
    assert page.url.endswith("/checks/new?type=business_rule&column=&condition=settled_at+%3C+executed_at")
    shot(page, "check-dry-run")
    assert _dump(site["root"]) == before  # nothing recorded
    assert (site["root"] / "checks" / "trades.yaml").read_text() == document
    page.get_by_role("button", name="Review and save…").click()
    diff = page.get_by_label("The change, as a unified diff")
    assert "+  - id: rule-broken" in diff.inner_text()
    shot(page, "check-review")
    page.get_by_role("button", name="Save rule-broken").click()
    page.wait_for_url(f"{site['base']}/datasets/{DATASET}/quality")
    assert page.get_by_role("status").inner_text().startswith("saved rule-broken in checks/trades.yaml")
    assert "rule-broken" in (site["root"] / "checks" / "trades.yaml").read_text()
    page.get_by_role("button", name="Run the checks now").click()
    page.wait_for_url(f"{site['base']}/datasets/{DATASET}/quality")
    assert page.get_by_role("status").inner_text().startswith("ran payments.trades at 2026-11-30: completed")
    strip = page.get_by_role("list", name=re.compile(r"^rule-broken: the latest 1 outcome"))
    assert "failed on 2026-11-30" in strip.inner_text()


def test_acknowledge_then_resolve_an_incident(site: dict[str, Any], page: Any) -> None:
    login(page, site, "author")
    page.get_by_role("link", name="Incidents").click()
    row = page.get_by_role("row", name=re.compile("total-volume"))
    row.get_by_role("link").first.click()
    expect(page.get_by_role("heading", name=re.compile("total-volume"))).to_be_visible()
    page.get_by_role("button", name="Acknowledge").click()
    expect(page.get_by_role("status")).to_contain_text("acknowledged by author")
    expect(page.locator("h1 .state")).to_have_text("acknowledged")
    page.get_by_label("Cause").select_option("expected_change")
    page.get_by_label("Note").fill("the EU venue was closed for a holiday")
    shot(page, "incident")
    page.get_by_role("button", name="Resolve").click()
    expect(page.get_by_role("status")).to_contain_text("resolved by author")
    events = page.get_by_role("row", name=re.compile(r"resolved .* author"))
    assert "expected_change" in events.inner_text()


def test_accept_a_new_value(site: dict[str, Any], page: Any) -> None:
    login(page, site, "author")
    page.get_by_role("link", name="Decisions").click()
    page.get_by_label("Dataset").fill("vendor_trades")
    page.get_by_role("button", name="Show").click()
    page.wait_for_url(re.compile(r"/decisions\?dataset=vendor_trades"))  # a screenshot mid-navigation fails
    shot(page, "decisions")
    row = page.get_by_role("row", name=re.compile("venue"))
    value = row.locator("code").inner_text()
    row.get_by_role("button", name=f"Accept venue = {value}").click()
    expect(page.get_by_role("status")).to_contain_text(f"venue = '{value}' accepted by author")
    assert site["plane"].store.decisions("vendor_trades")[0].status == "accepted"


def test_a_viewer_is_offered_no_write_and_a_forged_one_is_refused(site: dict[str, Any], page: Any) -> None:
    login(page, site, "viewer")
    page.goto(f"{site['base']}/datasets/{DATASET}/quality")
    assert page.get_by_role("button", name="Run the checks now").count() == 0
    assert page.get_by_role("link", name="Add a check").count() == 0
    # a write posted with the viewer's cookie: refused for the role, before and after the token
    answer = page.request.post(f"{site['base']}/datasets/{DATASET}/run", form={"csrf_token": "x"})
    assert answer.status == 403
    anonymous = page.context.browser.new_context()
    assert anonymous.request.get(f"{site['base']}/api/v1/catalog").status == 401
    anonymous.close()


def test_an_authors_form_without_its_csrf_token_is_refused(site: dict[str, Any], page: Any) -> None:
    login(page, site, "author")
    page.goto(f"{site['base']}/incidents")
    incident = page.get_by_role("row", name=re.compile("region-volume")).get_by_role("link").first
    href = incident.get_attribute("href")
    forged = page.request.post(f"{site['base']}{href}/ack", form={"csrf_token": "forged"})
    assert forged.status == 403 and "CSRF" in forged.text()


def test_keyboard_labels_and_the_other_pages(site: dict[str, Any], page: Any) -> None:
    login(page, site, "admin")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to the content"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    store = site["plane"].store
    run = store.run_page(kind="check", limit=1)[0][0].id
    gate = next(
        r.id for r in store.run_page(kind="gate", limit=100)[0] if (r.counts or {}).get("quarantined")
    )
    incident = store.incidents()[0].id
    proposal = store.proposals()[0].id
    every = {
        "/": None,
        f"/datasets/{DATASET}": None,
        f"/datasets/{DATASET}/quality": None,
        f"/datasets/{DATASET}/profile": "profile",
        f"/datasets/{DATASET}/expectations/fresh": None,
        f"/datasets/{DATASET}/checks/new": None,
        "/runs": "runs",
        f"/runs/{run}": None,
        "/incidents?state=": None,
        f"/incidents/{incident}": None,
        "/decisions": None,
        "/proposals": "proposals",
        f"/proposals/{proposal}": None,
        "/gate": "gate",
        f"/gate/runs/{gate}": "gate-run",
        "/audit": None,
        "/users": None,
    }
    for path, name in every.items():
        answer = page.goto(site["base"] + path)
        assert answer.status == 200, path
        unlabelled = page.evaluate(
            """() => [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
                  .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label'))
                  .map(e => e.name)"""
        )
        assert unlabelled == [], (path, unlabelled)
        assert page.locator("h1").count() == 1, path
        if name:
            shot(page, name)
    assert page.get_by_role("link", name=re.compile("Download all")).count() == 0  # /users was last
    page.goto(f"{site['base']}/gate/runs/{gate}")
    download = page.get_by_role("link", name=re.compile("Download all"))
    with page.expect_download() as done:
        download.click()
    assert done.value.suggested_filename == f"quarantine-{gate}.csv"
