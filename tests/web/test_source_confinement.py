"""The check editor reads no file and reaches no server the workspace does not allow: a draft's
hostile ``source`` answers 403 with the rule, on the preview, the dry run and the save, before
anything is opened (docs/web.md, "Safety"; docs/checks.md, "Where a source may be")."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _receivers import Listener
from web.conftest import Api

DATASET = "silver.accounts"  # no check document in the demo: the draft's source is the author's
EXPECT = "id: some-rows\nrule: RowCount > 0\n"
SECRET = "account_id,limit\nA-1,999111\n"


@pytest.fixture
def listener() -> Iterator[Listener]:
    found = Listener()
    yield found
    found.close()


def hostile_sources(outside: Path, port: int) -> list[str]:
    """Sources an author must not reach: another folder's file, up and out of the workspace, a
    glob that would list a system folder, a symlink's target, a server nobody declared."""
    return [
        f"{{path: {outside / 'secret.csv'}}}",
        "{path: ../../../elsewhere/secret.csv}",
        '{path: "/etc/*"}',
        "{path: ../data/escape.csv}",
        f'{{postgres: {{url: "postgresql://x@127.0.0.1:{port}/db", table: public.t}}}}',
        f"{{duckdb: {{path: {outside / 'db.duckdb'}, table: t}}}}",
    ]


def test_every_hostile_source_is_a_403_that_names_the_rule_and_reads_nothing(
    fresh: Any, tmp_path: Path, listener: Listener
) -> None:
    plane, client, tokens = fresh
    api = Api(client, tokens["author"])
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.csv").write_text(SECRET)
    (plane.root / "data").mkdir(exist_ok=True)
    (plane.root / "data" / "escape.csv").symlink_to(outside / "secret.csv")

    def documents() -> list[str]:  # a refused save may leave the document's (empty) lock file
        return sorted(p.name for p in (plane.root / "checks").iterdir() if not p.name.endswith(".lock"))

    checks = documents()
    for source in hostile_sources(outside, listener.port):
        draft = {"expect": EXPECT, "source": source}
        for route in ("preview", "dry-run"):
            answer = api.post(f"/datasets/{DATASET}/checks/{route}", draft)
            assert answer.status_code == 403, (source, route, answer.text)
            message = answer.json()["error"]
            assert "sources: paths:" in message or "sources: servers:" in message, message
            assert "999111" not in answer.text and "passwd" not in answer.text
        saved = api.post(f"/datasets/{DATASET}/checks", {**draft, "base": "0" * 64})
        assert saved.status_code in (403, 409), saved.text
    assert listener.connections() == 0
    assert documents() == checks  # nothing was saved


def test_a_source_inside_the_workspace_is_dry_run(fresh: Any) -> None:
    plane, client, tokens = fresh
    api = Api(client, tokens["author"])
    (plane.root / "data").mkdir(exist_ok=True)
    (plane.root / "data" / "accounts.csv").write_text("account_id,limit\nA-1,10\nA-2,20\n")
    draft = {"expect": EXPECT, "source": "{path: ../data/accounts.csv}"}
    answer = api.post(f"/datasets/{DATASET}/checks/dry-run", draft)
    assert answer.status_code == 200, answer.text
    assert answer.json()["latest"]["outcome"] == "passed"
