"""A check document as Dagster asset checks: one check per expectation, all judged by one assay run.

:func:`build_assay_asset_checks` is named and shaped as Dagster's own check factories
(``build_column_schema_change_checks``, ``build_metadata_bounds_checks``): keyword arguments, a
sequence of checks definitions for ``Definitions(asset_checks=[...])``. Its one definition is a
``multi_asset_check``: its op calls :func:`assay.platform.runs.check.run_document` ONCE (each
profile is measured in one query, as by ``assay check run``) and yields one result per
expectation (:mod:`assay.integrations.dagster.results`).

The document is read when the definitions are built, so that a mistake in it (a field, a line)
stops ``dagster dev`` or the code location from loading, naming the file and the line, instead of
failing on the first run.
"""

# No ``from __future__ import annotations`` here: Dagster reads the check function's ``context``
# annotation as a class, and refuses it as a string.
from collections.abc import Iterator, Sequence
from datetime import date, datetime
from pathlib import Path

import dagster as dg

from assay.errors import ConfigError
from assay.integrations.dagster.resource import AssayResource
from assay.integrations.dagster.results import check_name, check_result
from assay.platform.checks.document import Document, Expectation, load_document
from assay.vocabulary import RunState


def build_assay_asset_checks(
    document: str | Path,
    *,
    asset: dg.AssetsDefinition | dg.AssetKey | str | Sequence[str] | None = None,
    expectations: Sequence[str] | None = None,
    blocking: bool = True,
    resource_key: str = "assay",
    name: str | None = None,
) -> Sequence[dg.AssetChecksDefinition]:
    """The asset checks of the check document at ``document``, on ``asset`` (default: the
    document's dataset name, its dots as the key's parts: ``shop.orders`` is ``shop/orders``).

    ``expectations`` chooses some of the document's ids (``--only``); ``blocking`` makes every
    enforced expectation a blocking check (a failure at ``ERROR`` stops the downstream assets);
    ``resource_key`` names the :class:`AssayResource` in ``Definitions(resources=...)``; ``name``
    is the op's (default ``assay_`` and the dataset's name).

    >>> checks = build_assay_asset_checks("checks/orders.yaml")  # doctest: +SKIP
    """
    path = Path(document)
    loaded = _load(path)
    chosen = _chosen(loaded, path, expectations)
    key = _asset_key(loaded, asset)
    specs = [
        dg.AssetCheckSpec(
            check_name(e.id),
            asset=key,
            description=e.description or f"assay expectation {e.id} ({e.expect or e.rule})",
            blocking=blocking and e.mode == "enforce",
            metadata={"assay/expectation": e.id, "assay/severity": e.severity, "assay/mode": e.mode},
        )
        for e in chosen
    ]

    @dg.multi_asset_check(
        specs=specs,
        name=name or "assay_" + _identifier(loaded.dataset.name),
        description=f"assay check run {path}",
        required_resource_keys={resource_key},
        compute_kind="assay",
    )
    def _checks(context: dg.AssetCheckExecutionContext) -> Iterator[dg.AssetCheckResult]:
        resource: AssayResource = getattr(context.resources, resource_key)
        try:
            result = resource.run_check(
                loaded, path, at=_logical_date(context), only=[e.id for e in chosen] if expectations else ()
            )
        except ConfigError as error:  # the command's exit 2: a mistake to fix, not to retry
            raise dg.Failure(description=f"{path}: {error}", allow_retries=False) from None
        space = resource.open_workspace()
        summary_at = space.published(space.runs / f"{result.run_id}.json")
        run = {
            "run_id": result.run_id,
            "summary_at": dg.MetadataValue.url(summary_at)
            if "://" in summary_at
            else dg.MetadataValue.path(summary_at),
        }
        if result.state == RunState.SYSTEM_ERROR.value:  # the command's exit 3: nothing was measured
            raise dg.Failure(
                description=f"{path}: {result.error or 'the run could not measure'}",
                metadata={"assay_run_id": result.run_id, "run_summary": run["summary_at"]},
            )
        outcomes = result.to_dict()["outcomes"]
        for expectation in chosen:
            mine = [o for o in outcomes if o["expectation"] == expectation.id]
            yield check_result(expectation, mine, key, run)

    return [_checks]


def _load(path: Path) -> Document:
    try:
        return load_document(path)
    except ConfigError as error:  # each line names the file (a DocumentError's: file:line:col: message)
        raise dg.DagsterInvalidDefinitionError(str(error)) from None


def _chosen(document: Document, path: Path, wanted: Sequence[str] | None) -> list[Expectation]:
    """The expectations that become checks: every one, or the ids ``wanted`` names (each must be
    one of the document's); two ids whose check names are equal cannot both be checks."""
    known = {e.id: e for e in document.expectations}
    unknown = [i for i in wanted or () if i not in known]
    if unknown:
        raise dg.DagsterInvalidDefinitionError(
            f"{path}: no expectation {', '.join(map(repr, unknown))} "
            f"(its expectations: {', '.join(sorted(known))})"
        )
    chosen = [e for e in document.expectations if wanted is None or e.id in wanted]
    if not chosen:
        raise dg.DagsterInvalidDefinitionError(f"{path}: expectations=[] chooses no expectation")
    names: dict[str, str] = {}
    for e in chosen:
        other = names.setdefault(check_name(e.id), e.id)
        if other != e.id:
            raise dg.DagsterInvalidDefinitionError(
                f"{path}: expectations {other!r} and {e.id!r} are both the Dagster check "
                f"{check_name(e.id)!r} (Dagster's names have no '-'): rename one"
            )
    return chosen


def _asset_key(
    document: Document, asset: dg.AssetsDefinition | dg.AssetKey | str | Sequence[str] | None
) -> dg.AssetKey:
    """The checked asset's key: ``asset``'s, else the dataset's name split at its dots (as
    dagster-dbt's keys are a model's schema and name)."""
    if asset is None:
        return dg.AssetKey(document.dataset.name.split("."))
    return dg.AssetKey.from_coercible_or_definition(asset)


def _identifier(text: str) -> str:
    """``text`` as a Dagster name: any other character than a letter, digit or ``_`` is ``_``.

    >>> _identifier("shop.orders-eu")
    'shop_orders_eu'
    """
    return "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in text)


def _logical_date(context: dg.AssetCheckExecutionContext) -> str | date | datetime | None:
    """The run's logical date ``at``: the partition's key when it is a date (``2026-03-02``, as
    ``--at`` takes it), else the start of the partition's time window (an hourly partition);
    without a partition, None (the run's clock)."""
    if not context.has_partition_key:
        if context.has_partition_key_range:
            raise dg.Failure(
                description="assay checks one partition per run: run the partitions of the range one by one",
                allow_retries=False,
            )
        return None
    key = context.partition_key
    try:
        return date.fromisoformat(key) if len(key) == 10 else context.partition_time_window.start
    except (ValueError, dg.DagsterInvariantViolationError):
        raise dg.Failure(
            description=f"partition {key!r} is not a date, nor of a time-window partitioning: "
            "assay's logical date (at) is a date or a date-time",
            allow_retries=False,
        ) from None
