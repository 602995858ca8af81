"""A user's mistake with the Dagster asset checks is a Dagster error naming what to change: when
the definitions are built (the document is read then), or, for what only a run knows (its
partition, the workspace's settings), as the check step's failure, never retried. A run that
could not measure at all (the command's exit 3) fails the step with its error."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import dagster as dg
import pytest

from assay.integrations.dagster import AssayResource, build_assay_asset_checks

DOC = """apiVersion: assay/v1
kind: DatasetChecks
dataset: {name: shop.orders, source: {path: orders.csv}}
profiles:
  - id: all
    metrics: [row_count]
expectations:
  - {id: volume, metric: all.row_count, expect: "> 0"}
  - {id: some-rows, metric: all.row_count, expect: "> 1"}
"""


def _doc(tmp_path: Path, text: str = DOC) -> Path:
    (tmp_path / "orders.csv").write_text("order_id\n1\n2\n")
    path = tmp_path / "orders.yaml"
    path.write_text(text)
    return path


def test_an_invalid_document_is_refused_when_the_definitions_are_built(tmp_path: Path) -> None:
    path = _doc(tmp_path, DOC.replace('expect: "> 1"', 'expect: "> 1", severity: fatal'))
    with pytest.raises(dg.DagsterInvalidDefinitionError, match=rf"{path}:9:\d+: .*severity"):
        build_assay_asset_checks(path)


def test_a_missing_document_is_named(tmp_path: Path) -> None:
    with pytest.raises(dg.DagsterInvalidDefinitionError, match=r"nowhere\.yaml: no such check document"):
        build_assay_asset_checks(tmp_path / "nowhere.yaml")


def test_an_expectation_the_document_lacks_is_named(tmp_path: Path) -> None:
    path = _doc(tmp_path)
    with pytest.raises(
        dg.DagsterInvalidDefinitionError, match=r"no expectation 'volumes' .*some-rows, volume"
    ):
        build_assay_asset_checks(path, expectations=["volumes"])
    with pytest.raises(dg.DagsterInvalidDefinitionError, match=r"orders\.yaml: expectations=\[\] chooses no"):
        build_assay_asset_checks(path, expectations=[])


def test_two_ids_with_one_dagster_name_are_refused(tmp_path: Path) -> None:
    path = _doc(tmp_path, DOC.replace("id: volume", "id: some_rows"))
    with pytest.raises(dg.DagsterInvalidDefinitionError, match=r"'some_rows' and 'some-rows' .*rename one"):
        build_assay_asset_checks(path)


def test_a_partition_that_is_no_date_fails_the_step_naming_it(tmp_path: Path) -> None:
    regions = dg.StaticPartitionsDefinition(["eu"])

    @dg.asset(key=["shop", "orders"], partitions_def=regions)
    def orders() -> None: ...

    result = dg.materialize(
        [orders, *build_assay_asset_checks(_doc(tmp_path))],
        partition_key="eu",
        resources={"assay": AssayResource(workspace=str(tmp_path / "ws"))},
        raise_on_error=False,
    )
    (failure,) = result.get_step_failure_events()
    assert failure.step_key == "assay_shop_orders"
    assert "partition 'eu' is not a date" in failure.step_failure_data.user_failure_data.description
    assert not (tmp_path / "ws").exists()  # nothing ran


def test_a_mistake_only_a_run_sees_fails_the_step_naming_it(tmp_path: Path) -> None:
    # a route to a channel the workspace's assay.yaml does not declare: `check run` exits 2
    path = _doc(tmp_path, DOC + "notify:\n  - {when: {outcome: failed}, to: [pager]}\n")

    @dg.asset(key=["shop", "orders"])
    def orders() -> None: ...

    result = dg.materialize(
        [orders, *build_assay_asset_checks(path)],
        resources={"assay": AssayResource(workspace=str(tmp_path / "ws"))},
        raise_on_error=False,
    )
    (failure,) = result.get_step_failure_events()
    data = failure.step_failure_data.user_failure_data
    assert f"{path}: notify: routes send to undeclared channel(s) pager" in data.description
    assert not result.get_asset_check_evaluations()


def test_a_run_that_could_not_measure_fails_the_step_with_its_error(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on: the server refuses at once
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    source = f'{{postgres: {{url: "postgresql://nobody@127.0.0.1:{port}/none", table: public.t}}}}'
    path = _doc(
        tmp_path, DOC.replace("source: {path: orders.csv}}", f"source: {source}, retry: {{attempts: 1}}}}")
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "assay.yaml").write_text(f'sources:\n  servers: ["127.0.0.1:{port}"]\n')

    @dg.asset(key=["shop", "orders"])
    def orders() -> None: ...

    result = dg.materialize(
        [orders, *build_assay_asset_checks(path)],
        resources={"assay": AssayResource(workspace=str(workspace))},
        raise_on_error=False,
    )
    (failure,) = result.get_step_failure_events()
    data = failure.step_failure_data.user_failure_data
    assert f"{path}: could not connect to the PostgreSQL server 127.0.0.1:{port}" in data.description
    summary = json.loads(Path(data.metadata["run_summary"].value).read_text())
    assert (summary["run_id"], summary["state"]) == (data.metadata["assay_run_id"].value, "system_error")
    assert not result.get_asset_check_evaluations()
