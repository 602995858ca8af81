"""The check editor's drafts from a hostile or careless author (issue 28, items 2, 9 and 10): the
texts that hung the server or answered 500 are a 400 that says what to change, on the preview,
the dry run and the save, and nothing is written."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from web.conftest import Api

DATASET = "payments.trades"

LAUGHS = "".join(
    f"{name}: &{name} [{', '.join([f'*{below}'] * 9) if below else ', '.join(['lol'] * 9)}]\n"
    for below, name in zip(["", *"abcdefgh"], "abcdefghi", strict=True)
)
CHECK = "id: x\nmetric: daily.row_count\n"
INDENTED = "".join("  " + line for line in LAUGHS.splitlines(keepends=True))

DRAFTS: dict[str, tuple[dict[str, str], str]] = {
    "billion laughs": (
        {"expect": CHECK + "expect: '> 0'\nlols:\n" + INDENTED},
        "what makes it wrong: alias *d repeats 7,381 nodes: aliases may repeat at most 10,000 nodes "
        "in all (line 9, column 10)",
    ),
    "laughs in what to measure": (
        {"expect": CHECK + "expect: '> 0'\n", "measure": LAUGHS},
        "what to measure: alias *d repeats 7,381 nodes",
    ),
    # 9,000 levels: the API takes 20,000 characters of expect
    "deep nesting": (
        {"expect": CHECK + "expect: " + "[" * 9_000 + "]" * 9_000 + "\n"},
        "what makes it wrong: nested deeper than 64 levels (line 3, column 73)",
    ),
    "a key twice": (
        {"expect": CHECK + "expect: '> 0'\nexpect: '> 9'\n"},
        "what makes it wrong: key 'expect' at line 4 repeats line 3 (line 4, column 1)",
    ),
    "expect: 5": (
        {"expect": CHECK + "expect: 5\n"},
        "expect of 'x': a condition such as '> 0', 'between 10 and 20' or 'in [1, 2]' starts with",
    ),
    "expect: abc": ({"expect": CHECK + "expect: abc\n"}, "found 'abc'"),
    'expect: ""': ({"expect": CHECK + 'expect: ""\n'}, "found end of input"),
    "a huge window": (
        {"expect": CHECK + "expect: '> avg(last(99999999999999999999999))'\n"},
        "last(k) reads 1 to 10,000 earlier loads, not 99999999999999999999999",
    ),
}


@pytest.fixture(scope="module")
def document(demo_root: Path) -> Path:
    return demo_root / "checks" / "trades.yaml"


@pytest.mark.parametrize("case", list(DRAFTS))
@pytest.mark.parametrize("route", ["preview", "dry-run"])
def test_a_hostile_draft_is_a_400_that_says_what_to_change(
    as_role: dict[str | None, Api], document: Path, case: str, route: str
) -> None:
    before = document.read_text()
    draft, reason = DRAFTS[case]
    answer = as_role["author"].post(f"/datasets/{DATASET}/checks/{route}", draft)
    assert answer.status_code == 400, answer.text
    assert reason in answer.json()["error"]
    assert document.read_text() == before


@pytest.mark.parametrize("case", ["a key twice", "expect: 5", "billion laughs"])
def test_a_save_refuses_what_the_preview_refuses(
    as_role: dict[str | None, Api], document: Path, case: str
) -> None:
    before = document.read_text()
    draft, reason = DRAFTS[case]
    body: dict[str, Any] = {**draft, "base": hashlib.sha256(before.encode("utf-8")).hexdigest()}
    answer = as_role["author"].post(f"/datasets/{DATASET}/checks", body)
    assert answer.status_code == 400, answer.text
    assert reason in answer.json()["error"]
    assert document.read_text() == before
