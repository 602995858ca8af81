"""Classification proposals from value shapes (issue 33): a column of e-mail addresses, phone,
identity or card numbers is proposed ``pii`` from the shares a profile stores of its first rows.

Three days of a contributor's customer file as CSV (blank cells, ``NA``, an identity number that
the reader takes for an integer), each profiled by ``assay profile``; proposed by ``assay
propose``, accepted by ``assay proposals accept``, which writes ``dataset.classified``.
"""

from __future__ import annotations

import csv
import json
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from assay.measure import shapes
from assay.platform.checks.document import load_document
from assay.platform.proposals import propose
from assay.store import MetricStore

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _invoke import assay

DAYS = [date(2026, 11, 1) + timedelta(days=n) for n in range(3)]
ROWS = 40
DOCUMENT = """\
apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: bureau.customers   # one contributor's customers
  source: {path: "../data/*.csv"}
profiles:
  - id: daily
    metrics: [row_count]
"""


def card(n: int) -> str:
    """A 16-digit card number that passes the Luhn checksum, written in four groups."""
    body = f"4{n:014d}"
    digit = next(d for d in range(10) if shapes.luhn(body + str(d)))
    number = body + str(digit)
    return " ".join(number[i : i + 4] for i in range(0, 16, 4))


def row(day: int, i: int) -> dict[str, str]:
    last = day == len(DAYS) - 1
    return {
        "customer_id": str(1000 + i),
        "email": "" if i % 9 == 4 else f"user{day * 100 + i}@mail{i % 3}.example.com",
        "phone": "NA" if i % 11 == 3 else f"+60 1{i % 10}-{1000000 + i * 37:07d}",
        # a Malaysian NRIC: born YYMMDD, a place of birth, a serial; all digits (read as a number)
        "new_ic": f"{70 + i % 30:02d}{i % 12 + 1:02d}{i % 28 + 1:02d}{i % 14 + 1:02d}"
        f"{(day * 997 + i * 31) % 10000:04d}",
        "card_no": card(day * 1000 + i),
        "note": "NA" if i % 4 == 0 else f"called {i % 5} times",
        "half_email": f"user{i}@example.com" if i % 2 else f"user{i}",  # half the values
        "was_email": f"old{i}@example.com" if not last else f"code-{i}",  # not any more
        "amount": str(100 * i),
    }


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("customers")
    (root / "data").mkdir()
    (root / "checks").mkdir()
    (root / "checks" / "customers.yaml").write_text(DOCUMENT)
    for n, day in enumerate(DAYS):
        path = root / "data" / f"{day}.csv"
        rows = [row(n, i) for i in range(ROWS)]
        with path.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        code = assay(
            "profile", str(path), "--dataset", "bureau.customers", "--load-date", day.isoformat(),
            "--workspace", str(root), "--config", str(root / "checks" / "customers.yaml"),
        )  # fmt: skip
        assert code in (0, 1)
    return root


def shares_of(world: Path, column: str) -> dict[str, float | None]:
    with MetricStore.open(workspace=world) as store:
        latest = store.profiled_loads("bureau.customers")[-1]
    return {name: value for (entity, col, name), value in latest.metrics.items() if col == column}


def test_the_profile_stores_each_shapes_share_of_the_first_rows(world: Path) -> None:
    email = shares_of(world, "email")
    present = ROWS - sum(1 for i in range(ROWS) if i % 9 == 4)
    assert email["ShapeSample"] == present
    assert email["EmailShare"] == 1.0
    # NA is text to the CSV reader (its default null is the empty cell): a value of no shape
    assert shares_of(world, "phone")["PhoneShare"] == 0.9
    ic = shares_of(world, "new_ic")  # an integer column: shaped as its text
    assert ic["IdentityNumberShare"] == 1.0 and ic["ShapeSample"] == ROWS
    assert shares_of(world, "card_no")["CardNumberShare"] == 1.0
    assert shares_of(world, "half_email")["EmailShare"] == 0.5
    note = shares_of(world, "note")
    assert note["ShapeSample"] == ROWS
    assert not any(name.endswith("Share") for name in note)
    assert "ShapeSample" in shares_of(world, "amount") and "EmailShare" not in shares_of(world, "amount")


def test_personal_columns_are_proposed_pii_from_three_loads(world: Path) -> None:
    with MetricStore.open(workspace=world) as store:
        found = propose("bureau.customers", store=store, workspace=world, record=False)
    assert any("classifications are proposed from any" in note for note in found.notes)
    assert {p.kind for p in found.proposals} == {"classify"}  # too few loads for anything else
    shown = {p.evidence["column"]: p for p in found.proposals}
    assert {c: p.evidence["shape"] for c, p in shown.items()} == {
        "email": "email",
        "phone": "phone",
        "new_ic": "identity_number",
        "card_no": "card_number",
    }  # not half_email (50 %), nor was_email (not on the latest load), note or amount
    email = shown["email"]
    assert email.expectation["classified"] == {"pii": ["email"]}
    assert email.evidence["loads"] == 3 and email.evidence["share"] == 1.0
    assert email.backtest == {"loads": 3, "would_have_failed": 0}
    assert email.dry_run == {"outcome": None, "observed": 1.0}
    assert found.queries == 0  # a classification is not dry-run on the data
    # the evidence holds numbers, never a value
    assert "@" not in json.dumps([p.to_dict() for p in found.proposals])


def test_with_enough_loads_classifications_come_with_the_other_kinds(world: Path) -> None:
    with MetricStore.open(workspace=world) as store:
        found = propose("bureau.customers", store=store, workspace=world, record=False, min_loads=2)
    kinds = {p.kind for p in found.proposals}
    assert "classify" in kinds and len(kinds) > 1
    assert sorted(p.evidence["column"] for p in found.proposals if p.kind == "classify") == [
        "card_no",
        "email",
        "new_ic",
        "phone",
    ]


def test_accepting_classifies_the_column_in_the_document(
    world: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    root = tmp_path / "ws"
    shutil.copytree(world, root)
    workspace = ["--workspace", str(root)]
    assert assay("propose", "bureau.customers", "--json", *workspace) == 0
    listed = json.loads(capsys.readouterr().out)
    by_column = {p["evidence"]["column"]: p for p in listed if p["kind"] == "classify"}
    assert assay("proposals", "accept", by_column["email"]["id"][:8], "--by", "ann", *workspace) == 0
    assert assay("proposals", "accept", by_column["new_ic"]["id"][:8], "--by", "ann", *workspace) == 0
    capsys.readouterr()
    path = root / "checks" / "customers.yaml"
    text = path.read_text()
    assert "# one contributor's customers" in text  # the author's comment kept
    assert load_document(path).dataset.classified == {"pii": ("email", "new_ic")}
    with MetricStore.open(workspace=root) as store:
        rows, _ = store.audit_trail(dataset="bureau.customers")
        trail = [a for a in rows if a.action == "proposal.accept"]
    assert len(trail) == 2 and "classified" in trail[0].detail["diff"]
    # proposed again: the classified columns are left out, the others still shown
    assert assay("propose", "bureau.customers", "--json", *workspace) == 0
    again = json.loads(capsys.readouterr().out)
    assert sorted(p["evidence"]["column"] for p in again) == ["card_no", "phone"]
    assert assay("propose", "bureau.customers", *workspace) == 0
    printed = capsys.readouterr().out
    assert "classify card_no as pii" in printed and "latest load 100%" in printed


def test_a_proposal_is_shown_with_the_threshold_it_was_mined_with(
    world: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The threshold is kept in the evidence: a proposal mined at 85 % is listed as mined at 85 %
    after the threshold changed (the web's proposal page reads the same field)."""
    import shutil

    from assay.platform.proposals.kinds import classify

    root = tmp_path / "ws"
    shutil.copytree(world, root)
    workspace = ["--workspace", str(root)]
    with monkeypatch.context() as patched:
        patched.setattr(classify, "THRESHOLD", 0.85)
        assert assay("propose", "bureau.customers", "--json", *workspace) == 0
    mined = [p for p in json.loads(capsys.readouterr().out) if p["kind"] == "classify"]
    assert mined and {p["evidence"]["threshold"] for p in mined} == {0.85}
    assert assay("proposals", "list", "--dataset", "bureau.customers", *workspace) == 0
    listed = [line for line in capsys.readouterr().out.splitlines() if " classify " in line]
    assert len(listed) == len(mined) and all("under 85% on" in line for line in listed)


def test_an_accept_killed_after_writing_the_document_is_rolled_forward(world: Path, tmp_path: Path) -> None:
    """The document holds the column already (a kill after its write): the decision is recorded
    and the document left as it is."""
    import shutil

    from assay.platform.proposals.decide import accept

    root = tmp_path / "ws"
    shutil.copytree(world, root)
    with MetricStore.open(workspace=root) as store:
        found = propose("bureau.customers", store=store, workspace=root, at=datetime.now(UTC))
        phone = next(p for p in found.proposals if p.evidence["column"] == "phone")
        path = root / "checks" / "customers.yaml"
        path.write_text(path.read_text().replace("  source:", "  classified: {pii: [phone]}\n  source:"))
        before = path.read_text()
        done = accept(store, phone.id, by="ann", workspace=root)
        assert done.diff == "" and done.proposal.state == "accepted"
    assert path.read_text() == before
