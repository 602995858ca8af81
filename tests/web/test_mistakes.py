"""A user's mistake in a URL or an editor's dataset is an answer with a message, never a 500:
huge integers in paths and queries, a dataset named without a namespace (docs/web.md)."""

from __future__ import annotations

import pytest

from web.conftest import Api

HUGE = "9" * 30


@pytest.mark.parametrize("action", ["accept", "reject"])
def test_a_huge_decision_id_is_404(as_role: dict[str | None, Api], action: str) -> None:
    answer = as_role["author"].post(f"/decisions/{HUGE}/{action}")
    assert answer.status_code == 404 and f"no decision {HUGE}" in answer.json()["error"]


@pytest.mark.parametrize(
    "path", ["/runs", "/incidents", "/decisions", "/proposals", "/gate/runs", "/audit", "/catalog"]
)
def test_a_huge_page_number_is_400(as_role: dict[str | None, Api], path: str) -> None:
    answer = as_role["viewer"].get(path, page=HUGE)
    assert answer.status_code == 400 and "page must be between 1 and" in answer.json()["error"]


def test_a_huge_page_number_on_a_page_is_400(client: object, tokens: dict[str, str]) -> None:
    answer = client.get(
        "/runs", params={"page": HUGE}, headers={"authorization": f"Bearer {tokens['viewer']}"}
    )  # type: ignore[attr-defined]
    assert answer.status_code == 400 and "page must be between 1 and" in answer.text


@pytest.mark.parametrize("dataset", ["orders", "vendor_trades"])
def test_the_editor_opens_on_a_dataset_without_a_namespace(
    as_role: dict[str | None, Api], dataset: str
) -> None:
    template = as_role["author"].get(f"/datasets/{dataset}/checks/template", type="volume")
    assert template.status_code == 200, template.text
    body = template.json()
    assert body["has_document"] is False and "iceberg" not in body["source"]
    preview = as_role["author"].post(
        f"/datasets/{dataset}/checks/preview",
        {"measure": body["measure"], "expect": body["expect"], "source": body["source"]},
    )
    assert preview.status_code == 200, preview.text
    assert f"name: {dataset}" in preview.json()["diff"]
