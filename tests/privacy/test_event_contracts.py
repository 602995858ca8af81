"""docs/privacy.md: an event contract keeps no value, so it has nothing to classify. A contract
that reads planted e-mail addresses (and fails on them: they are in no allowed set) leaves none of
them in its console, ``--json``, run summary or any table of the store."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from _invoke import completed

EMAILS = [f"person.{name}@mail.example" for name in ("ana", "bo", "cy", "di", "ed")]
CONTRACT = """apiVersion: assay/v1
kind: EventContract
event:
  name: signup.v1
  source: {path: "../events/*.jsonl"}
  key: event_id
  event_time: event_ts
consumer: {team: crm}
fields:
  email: {present: true, type: string, in: [nobody@bureau.example]}
"""


def test_a_contract_on_personal_fields_keeps_no_value_of_them(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "events").mkdir(parents=True)
    (root / "checks").mkdir()
    records = [
        {"event_id": f"e{i}", "event_ts": f"2026-11-12T10:{i:02d}:00Z", "email": EMAILS[i % 5]}
        for i in range(20)
    ]
    (root / "events" / "signups.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (root / "checks" / "signups.yaml").write_text(CONTRACT)
    done = completed(
        "check", "run", str(root / "checks" / "signups.yaml"), "--at", "2026-11-12T10:00",
        "--now", "2026-11-12T11:05:00Z", "--workspace", str(root), "--json", str(root / "out.json"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    outcomes = {o["expectation"]: o for o in json.loads((root / "out.json").read_text())["outcomes"]}
    # the values were read: every one is present and text, none in the allowed set
    assert {e: (o["outcome"], o["observed"]) for e, o in outcomes.items()} == {
        "crm/email.present": ("passed", 1),
        "crm/email.type": ("passed", 1),
        "crm/email.in": ("failed", 0),
    }
    texts = [done.stdout, done.stderr, (root / "out.json").read_text()]
    texts += [p.read_text() for p in (root / "runs").glob("*.json")]
    with sqlite3.connect(root / "assay.db") as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        stored = [repr(db.execute(f'SELECT * FROM "{t}"').fetchall()) for t in tables]
    assert len(tables) > 10 and any("email.in" in text for text in stored)  # the run was stored
    assert [e for e in EMAILS if any(e in text for text in texts + stored)] == []
