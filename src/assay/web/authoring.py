"""Adding a check from the web: a template per check type fills both documents (what to measure:
the metric entries its profile gains; what makes it wrong: the expectation), a dry run shows
what it would have flagged on the latest load and over the stored history, and a save writes the
check document after its diff was shown.

- **Templates** (:data:`TEMPLATES`): one small function per check type, named in a table; each
  reads what the store knows of the dataset (its columns and their types, a categorical
  column's values, a column's range) to pre-fill sensible values.
- **Dry run**: the document with the new check is run with ``dry_run=True`` and ``--only`` the
  new expectation (:class:`~assay.platform.runs.check.CheckRun`) on the latest logical date
  the dataset has recorded runs for, then on each earlier recorded date (the backtest, at most
  :data:`BACKTEST_MAX`); each date is judged with the clock of the run that recorded it. Nothing
  is recorded: no metric, outcome, run or file.
- **Save**: the document is edited in place keeping its comments
  (:func:`~assay.platform.checks.edit.edited_text`), validated, shown as a diff, and written only
  when the document is still the one the diff was made from (``base``, its SHA-256); the write
  is recorded in the audit trail with the diff.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from assay.errors import ConfigError
from assay.web.catalog import subject
from assay.web.plane import Plane
from assay.workspace import Workspace

if TYPE_CHECKING:
    import pyarrow as pa

BACKTEST_DAYS = 30
BACKTEST_MAX = 90
SAMPLE_ROWS = 20
"""Rows a business rule keeps as evidence of each failing load (the dry run shows them)."""

# canonical type names (assay.engine.types), which the store keeps and the table's schema is read
# as: matching DuckDB's names instead passed a ``long`` (BIGINT) column over as no number
_TIME_TYPES = frozenset({"timestamp", "timestamptz", "date", "time"})
_INSTANT_TYPES = frozenset({"timestamp", "timestamptz"})
_NUMBER_TYPES = frozenset({"int", "long", "float", "double", "decimal"})
_SAFE_ID = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass
class Known:
    """What a template may read about the dataset: its columns with their types, the profile new
    metrics go to, and the store."""

    plane: Plane
    dataset: str
    profile: str
    columns: list[tuple[str, str]]
    ids: set[str] = field(default_factory=set)

    def first(self, *kinds: frozenset[str], named: tuple[str, ...] = ()) -> str | None:
        """The first column whose name contains one of ``named``, else whose type is one of
        ``kinds``, else the first column."""
        for word in named:
            for name, _ in self.columns:
                if word in name.lower():
                    return name
        for name, type_ in self.columns:
            if any(_base(type_) in group for group in kinds):
                return name
        return self.columns[0][0] if self.columns else None

    def free_id(self, base: str) -> str:
        base = _SAFE_ID.sub("-", base).strip("-").lower() or "check"
        if not base[0].isalpha() and base[0] != "_":
            base = f"c-{base}"
        found, n = base, 1
        while found in self.ids:
            n += 1
            found = f"{base}-{n}"
        return found


@dataclass(frozen=True)
class Template:
    """Both documents of a check type, pre-filled: the metric entries its profile gains and the
    expectation."""

    kind: str
    measure: list[Any]
    expectation: dict[str, Any]

    def texts(self) -> dict[str, str]:
        return {
            "measure": _dump(self.measure) if self.measure else "[]\n",
            "expect": _dump(self.expectation),
        }


def _freshness(k: Known, p: dict[str, str]) -> Template:
    column = p.get("column") or k.first(_TIME_TYPES, named=("updated", "loaded", "ingested", "_at"))
    column = column or "updated_at"
    return Template(
        "freshness",
        [{"freshness": column}],
        {
            "id": k.free_id(f"{column}-fresh"),
            "metric": f"{k.profile}.freshness({column})",
            "expect": "<= 24 hours",
            "severity": "error",
            "dimension": "freshness",
        },
    )


def _volume(k: Known, p: dict[str, str]) -> Template:
    return Template(
        "volume",
        ["row_count"],
        {
            "id": k.free_id("volume"),
            "metric": f"{k.profile}.row_count",
            "expect": "between avg(last(7)) * 0.8 and avg(last(7)) * 1.2",
            "min_history": 5,
            "severity": "error",
        },
    )


def _completeness(k: Known, p: dict[str, str]) -> Template:
    column = p.get("column") or k.first(named=("id",)) or "id"
    return Template(
        "completeness",
        [{"null_rate": [column]}],
        {
            "id": k.free_id(f"{column}-complete"),
            "metric": f"{k.profile}.null_rate({column})",
            "expect": "<= 0.01",
            "severity": "error",
        },
    )


def _uniqueness(k: Known, p: dict[str, str]) -> Template:
    column = p.get("column") or k.first(named=("_id", "id")) or "id"
    return Template(
        "uniqueness",
        [],
        {
            "id": k.free_id(f"{column}-unique"),
            "rule": f'IsUnique "{column}"',
            "profile": k.profile,
            "severity": "error",
        },
    )


def _value_set(k: Known, p: dict[str, str]) -> Template:
    known = k.plane.store.value_sets(k.dataset)
    column = p.get("column") or next(iter(known), None) or k.first(named=("status", "type", "code"))
    column = column or "status"
    values = sorted(k.plane.store.value_set(k.dataset, column)) or ["A", "B"]
    listed = ", ".join(_dqdl_string(v) for v in values[:50])
    return Template(
        "value_set",
        [],
        {
            "id": k.free_id(f"{column}-values"),
            "rule": f'ColumnValues "{column}" in [{listed}]',
            "profile": k.profile,
            "severity": "error",
        },
    )


def _range(k: Known, p: dict[str, str]) -> Template:
    column = p.get("column") or k.first(_NUMBER_TYPES) or "amount"
    low, high = _observed_range(k, column)
    return Template(
        "range",
        [],
        {
            "id": k.free_id(f"{column}-range"),
            "rule": f'ColumnValues "{column}" between {_number(low)} and {_number(high)}',
            "profile": k.profile,
            "severity": "error",
        },
    )


def _business_rule(k: Known, p: dict[str, str]) -> Template:
    condition = p.get("condition") or _example_condition(k)
    name = _SAFE_ID.sub("_", p.get("name") or "rule_broken").strip("_").lower() or "rule_broken"
    if not name[0].isalpha():
        name = f"r_{name}"
    return Template(
        "business_rule",
        [{"count_where": {"name": name, "condition": condition, "sample_rows": SAMPLE_ROWS}}],
        {
            "id": k.free_id(name.replace("_", "-")),
            "metric": f"{k.profile}.{name}",
            "expect": "= 0",
            "severity": "error",
            "description": "Rows where the condition holds break the rule.",
        },
    )


def _custom(k: Known, p: dict[str, str]) -> Template:
    return Template(
        "custom",
        [],
        {
            "id": k.free_id("custom"),
            "rule": p.get("rule") or "RowCount > 0",
            "profile": k.profile,
            "severity": "error",
        },
    )


TEMPLATES: dict[str, tuple[str, str, Callable[[Known, dict[str, str]], Template]]] = {
    "freshness": ("Freshness", "The newest row is recent enough.", _freshness),
    "volume": ("Volume", "The row count stays near its recent average.", _volume),
    "completeness": ("Completeness", "A column is seldom missing.", _completeness),
    "uniqueness": ("Uniqueness", "A column identifies its rows.", _uniqueness),
    "value_set": ("Value set", "A column holds only known values.", _value_set),
    "range": ("Range", "A number column stays within bounds.", _range),
    "business_rule": (
        "Business rule",
        "No row breaks a rule such as settled_at >= executed_at.",
        _business_rule,
    ),
    "custom": ("Custom DQDL", "Any one DQDL rule.", _custom),
}
"""Every check type the web offers: its title, what it checks, and the template that fills it."""


def check_types() -> list[dict[str, str]]:
    return [{"type": key, "title": t, "description": d} for key, (t, d, _) in TEMPLATES.items()]


# --- the draft: what the form holds -----------------------------------------------------------------


@dataclass
class Draft:
    """The two documents of a new (or edited) check as the author left them, and where they go."""

    measure: str = "[]"
    expect: str = ""
    profile: str | None = None
    source: str | None = None  # for a dataset without a document: where its data is (YAML)
    replacing: str | None = None  # the id of the expectation this edits


@dataclass
class Built:
    """A draft applied to the dataset's document: the text before and after, the expectation's id."""

    path: Path
    before: str
    after: str
    expectation: str
    new_document: bool

    @property
    def base(self) -> str:
        return hashlib.sha256(self.before.encode("utf-8")).hexdigest()


def template(plane: Plane, dataset: str, kind: str, params: dict[str, str] | None = None) -> dict[str, Any]:
    """The pre-filled documents of check type ``kind`` for ``dataset``."""
    if kind not in TEMPLATES:
        raise ConfigError(f"check type must be one of {', '.join(TEMPLATES)}, not {kind!r}")
    known = _known(plane, dataset)
    built = TEMPLATES[kind][2](known, dict(params or {}))
    s = subject(plane, dataset)
    out: dict[str, Any] = {
        "dataset": dataset,
        "type": kind,
        "title": TEMPLATES[kind][0],
        "profile": known.profile,
        "profiles": [p.id for p in s.document.profiles] if s.document is not None else [known.profile],
        "columns": [{"name": n, "type": t} for n, t in known.columns],
        **built.texts(),
        "has_document": s.document is not None,
        "source": None if s.document is not None else _dump(_guess_source(plane, dataset)),
        "types": check_types(),
    }
    return out


def edit_template(plane: Plane, dataset: str, expectation_id: str) -> dict[str, Any]:
    """The documents of an existing expectation, for an edit."""
    s = subject(plane, dataset)
    if s.document is None:
        raise ConfigError(f"{dataset} has no check document")
    found = next((e for e in s.document.expectations if e.id == expectation_id), None)
    if found is None:
        raise ConfigError(f"no expectation {expectation_id!r} in {plane.relative(s.path)}")
    from assay.platform.checks.document import read_text
    from assay.platform.checks.edit import expectation_text

    assert s.path is not None
    written = expectation_text(
        read_text(s.path, "check document"), expectation_id, filename=plane.relative(s.path)
    )
    known = _known(plane, dataset)
    return {
        "dataset": dataset,
        "type": "edit",
        "title": f"Edit {expectation_id}",
        "profile": s.document.expectation_profile(found).id,
        "profiles": [p.id for p in s.document.profiles],
        "columns": [{"name": n, "type": t} for n, t in known.columns],
        "measure": "[]\n",
        "expect": written,
        "has_document": True,
        "source": None,
        "replacing": expectation_id,
        "types": check_types(),
    }


def build(plane: Plane, dataset: str, draft: Draft) -> Built:
    """The dataset's document with the draft applied; a :class:`ConfigError` (with every
    problem) when the draft or the edited document is not valid."""
    from assay.platform.checks.document import parse_document, read_text
    from assay.platform.checks.edit import edited_text
    from assay.platform.sources import confine

    s = subject(plane, dataset)
    measure = _load(draft.measure or "[]", "what to measure")
    expectation = _load(draft.expect, "what makes it wrong")
    if measure is None:
        measure = []
    if not isinstance(measure, list):
        raise ConfigError("what to measure: write a YAML list of metric entries, such as [row_count]")
    if not isinstance(expectation, dict):
        raise ConfigError("what makes it wrong: write one expectation as a YAML mapping with an id")
    eid = expectation.get("id")
    if not isinstance(eid, str) or not eid:
        raise ConfigError("what makes it wrong: the expectation needs an id")
    profile: str | None
    if s.document is not None and s.path is not None:
        path = s.path
        before = read_text(path, "check document")
        profile = draft.profile or (s.document.profiles[0].id if s.document.profiles else None)
        new = False
        base_text = before
    else:
        path = _new_path(plane, dataset)
        before = ""
        profile = draft.profile or "daily"
        new = True
        base_text = _new_document(dataset, draft.source, profile)
    metrics = {profile: measure} if measure and profile else None
    after = edited_text(
        base_text,
        [expectation],
        metrics,
        filename=plane.relative(path),
        replacing=draft.replacing,
    )
    # an author's source reaches only what the workspace allows, before any dry run opens it
    # and before a save could keep it (docs/web.md, "Safety")
    confine(
        parse_document(after, filename=plane.relative(path)).dataset.source,
        base=path.parent,
        workspace=plane.root,
    )
    return Built(path, before, after, eid, new)


def preview(plane: Plane, dataset: str, draft: Draft) -> dict[str, Any]:
    """The diff a save would write, and the ``base`` the save must be made on."""
    from assay.platform.checks.edit import diff_text

    built = build(plane, dataset, draft)
    return {
        "dataset": dataset,
        "document": plane.relative(built.path),
        "new_document": built.new_document,
        "expectation": built.expectation,
        "diff": diff_text(built.before, built.after, plane.relative(built.path)),
        "base": built.base,
    }


def save(plane: Plane, dataset: str, draft: Draft, *, base: str, by: str) -> dict[str, Any]:
    """Write the draft into the document, if the document is still the one the diff was shown
    for (``base``); record the write, with its diff, in the audit trail. The comparison and the
    write are one step under the document's lock: of authors saving on one base at once, one
    writes and the others are told the document changed (a :class:`Conflict`), so every save
    answered as saved is in the document."""
    from assay.platform.checks.document import read_text
    from assay.platform.checks.edit import diff_text, document_lock, write_document

    path = _document_path(plane, dataset)
    changed = Conflict(f"{plane.relative(path)} changed since its diff was shown: review the change again")
    with document_lock(path):
        current = read_text(path, "check document") if path.exists() else ""
        if hashlib.sha256(current.encode("utf-8")).hexdigest() != base:
            raise changed
        built = build(plane, dataset, draft)
        if built.path != path or built.base != base:
            raise changed
        write_document(built.path, built.after)
    diff = diff_text(built.before, built.after, plane.relative(built.path))
    action = "check.edit" if draft.replacing else "check.add"
    plane.store.audit(
        by,
        action,
        f"{dataset}/{built.expectation}",
        dataset=dataset,
        detail={"document": plane.relative(built.path), "diff": diff, "replacing": draft.replacing},
    )
    return {
        "dataset": dataset,
        "document": plane.relative(built.path),
        "expectation": built.expectation,
        "diff": diff,
        "saved": True,
    }


def _document_path(plane: Plane, dataset: str) -> Path:
    """The dataset's document, or where a new one goes."""
    s = subject(plane, dataset)
    if s.document is not None and s.path is not None:
        return Path(s.path)
    return _new_path(plane, dataset)


class Conflict(ConfigError):
    """The document changed between the review and the save (HTTP 409)."""


# --- dry runs ---------------------------------------------------------------------------------------


def dry_run(plane: Plane, dataset: str, draft: Draft, *, days: int = BACKTEST_DAYS) -> dict[str, Any]:
    """What the draft's check would have said on the latest load (with the rows it flags) and
    on each earlier recorded date (the backtest); nothing is recorded."""
    from assay.platform.checks.document import parse_document
    from assay.platform.runs.check import CheckRun

    if not 0 <= days <= BACKTEST_MAX:
        raise ConfigError(f"the backtest covers 0 to {BACKTEST_MAX} earlier dates, not {days}")
    built = build(plane, dataset, draft)
    document = parse_document(built.after, filename=plane.relative(built.path))
    dates = plane.store.check_dates(dataset, limit=days + 1)
    if not dates:
        clock = plane.clock()
        dates = [(datetime.combine(clock.date(), time(), UTC), clock.isoformat())]
    results = []
    queries = 0
    for at, now in dates:
        result = CheckRun(
            document,
            built.path,
            at=at.date() if at.time() == time() else at,
            now=now or _end_of(at),
            store=plane.store,
            workspace=plane.workspace,
            only=[built.expectation],
            dry_run=True,
        ).run()
        queries += int(result.queries.get("measure", 0))
        results.append((at, result))
    latest_at, latest = results[0]
    backtest = [_line(at, r, built.expectation) for at, r in reversed(results[1:])]
    judged = [b for b in backtest if b["outcome"] in ("passed", "failed")]
    return {
        "dataset": dataset,
        "expectation": built.expectation,
        "latest": {
            **_line(latest_at, latest, built.expectation),
            "state": latest.state,
            "outcomes": [
                o | {"samples": o.get("samples") or []}
                for o in latest.outcomes
                if o["expectation"] == built.expectation
            ],
        },
        "backtest": {
            "dates": backtest,
            "loads": len(backtest),
            "judged": len(judged),
            "would_have_failed": sum(1 for b in judged if b["outcome"] == "failed"),
        },
        "queries": queries,
        "recorded": False,
    }


def _line(at: datetime, result: Any, eid: str) -> dict[str, Any]:
    """One date of a dry run: the outcome shown for it (a failing group fails the date), with the
    total's observed and expected values."""
    mine = [o for o in result.outcomes if o["expectation"] == eid]
    states = [o["outcome"] for o in mine]
    from assay.web.datasets import STATE_ORDER

    if states:
        state = min(states, key=STATE_ORDER.index)
    else:
        state = "system_error" if result.state != "completed" else "skipped"
    total = next((o for o in mine if not o.get("group")), mine[0] if mine else None)
    return {
        "at": at.date().isoformat() if at.time() == time() else at.isoformat(),
        "outcome": state,
        "observed": None if total is None else total.get("observed"),
        "expected": None if total is None else total.get("expected"),
        "message": None if total is None else total.get("message"),
        "flagged": None if total is None else total.get("flagged"),
        "groups_failed": sum(1 for o in mine if o.get("group") and o["outcome"] == "failed"),
    }


def _end_of(at: datetime) -> datetime:
    return datetime.combine(at.date(), time(23, 59, 59), UTC)


# --- helpers ----------------------------------------------------------------------------------------


def _known(plane: Plane, dataset: str) -> Known:
    s = subject(plane, dataset)
    columns = list(plane.store.latest_schema(dataset)) or _table_schema(plane, dataset)
    if not columns and s.document is not None:
        columns = [(name, "") for name in s.document.dataset.columns]
    profile = s.document.profiles[0].id if s.document is not None and s.document.profiles else "daily"
    ids = {e.id for e in s.document.expectations} if s.document is not None else set()
    return Known(plane, dataset, profile, columns, ids)


def _observed_range(k: Known, column: str) -> tuple[float, float]:
    found = k.plane.store.latest_profile(k.dataset)
    metrics = (found or {}).get("metrics") or {}
    low = metrics.get(("Column", column, "Minimum"))
    high = metrics.get(("Column", column, "Maximum"))
    if low is None or high is None:
        return 0.0, 1_000_000.0
    span = (high - low) or abs(high) or 1.0
    return low - span * 0.5, high + span * 0.5


def _example_condition(k: Known) -> str:
    """A condition that flags a row breaking a rule, to edit: the second timestamp before the
    first (``settled_at < executed_at``), a negative number, or a missing first column."""
    times = [n for n, t in k.columns if _base(t) in _INSTANT_TYPES]
    if len(times) >= 2:
        return f"{_ident(times[1])} < {_ident(times[0])}"
    numbers = [n for n, t in k.columns if _base(t) in _NUMBER_TYPES]
    if numbers:
        return f"{_ident(numbers[0])} < 0"
    first = k.columns[0][0] if k.columns else "id"
    return f"{_ident(first)} IS NULL"


def _ident(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) else '"' + name.replace('"', '""') + '"'


def _number(value: float) -> str:
    if math.isfinite(value) and value == int(value):
        return str(int(value))
    return f"{value:.6g}"


def _dqdl_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _guess_source(plane: Plane, dataset: str) -> dict[str, Any]:
    """Where a dataset without a document likely is: a table of the workspace's warehouse, else
    the file its latest load read (relative to ``checks/``) when the workspace allows reading it,
    else a placeholder to edit (never a source the save would refuse)."""
    from assay.platform.sources import SourcePolicy

    if _table_schema(plane, dataset):
        return {"iceberg": dataset}
    placeholder = {"path": f"../data/{dataset}/*.parquet"}
    recorded = plane.store.latest_source(dataset)
    if recorded is None:
        return placeholder
    checks = plane.root / "checks"
    # a load records its path as its command line gave it (relative to where that ran: the
    # server's folder is the best guess of it)
    candidate = Path(recorded) if Path(recorded).is_absolute() else Path.cwd() / recorded
    try:
        found = SourcePolicy.of(plane.root).path(str(candidate), base=checks).resolve()
    except ConfigError:  # outside what the workspace allows, or a broken assay.yaml
        return placeholder
    inside = found.is_relative_to(plane.root.resolve())
    return {"path": os.path.relpath(found, checks.resolve()) if inside else str(found)}


def _table_schema(plane: Plane, dataset: str) -> list[tuple[str, str]]:
    """The columns of the workspace's Iceberg table ``dataset``, or [] when there is none: a
    dataset whose name is not ``namespace.table`` (the demo's ``orders``) is no table, and no
    mistake either."""
    from assay.lake.iceberg import NAME_PART

    parts = dataset.split(".")
    if len(parts) != 2 or not all(NAME_PART.fullmatch(p) for p in parts):
        return []
    workspace = Workspace(plane.root)
    if not (plane.root / "warehouse").is_dir() and workspace.catalog() is None:
        return []  # no table yet, and no need to create the workspace's catalog to say so

    with workspace.warehouse() as warehouse:
        if not warehouse.exists(dataset):
            return []
        return [(f.name, _arrow_type(f.type)) for f in warehouse.schema(dataset)]


def _base(type_name: str) -> str:
    """A canonical type's name without its parameters: ``decimal(18,3)`` is a ``decimal``."""
    return type_name.split("(", 1)[0]


def _arrow_type(type_: pa.DataType) -> str:
    """The canonical name of an Iceberg table's column, read as Arrow (``int64`` is ``long``), so
    that a table's columns are named as the store names a profiled dataset's."""
    import pyarrow as pa

    if pa.types.is_integer(type_):
        return "long" if type_.bit_width > 32 else "int"
    if pa.types.is_floating(type_):
        return "double" if type_.bit_width > 32 else "float"
    if pa.types.is_decimal(type_):
        return f"decimal({type_.precision},{type_.scale})"
    if pa.types.is_timestamp(type_):
        return "timestamp" if type_.tz is None else "timestamptz"
    if pa.types.is_date(type_):
        return "date"
    if pa.types.is_time(type_):
        return "time"
    if pa.types.is_boolean(type_):
        return "boolean"
    if pa.types.is_string(type_) or pa.types.is_large_string(type_):
        return "string"
    return str(type_)


def _new_path(plane: Plane, dataset: str) -> Path:
    """Where a new document of ``dataset`` goes: ``checks/<dataset>.yaml``, or, when that file is
    another flow's settings, ``checks/<dataset>.checks.yaml``."""
    from assay.web.plane import FILE_NAME

    if not FILE_NAME.match(dataset) or ".." in dataset:
        raise ConfigError(
            f"dataset {dataset!r} cannot name a document file: write checks/NAME.yaml with "
            f"dataset.name: {dataset!r} by hand, then add checks to it here"
        )
    plain = plane.checks / f"{dataset}.yaml"
    return plain if not plain.exists() else plane.checks / f"{dataset}.checks.yaml"


def _new_document(dataset: str, source: str | None, profile: str) -> str:
    found = _load(source or "", "where the data is") if source else None
    if not isinstance(found, dict) or not found:
        raise ConfigError(
            "where the data is: write the source as a YAML mapping, such as {path: ../data/orders.csv} "
            "or {iceberg: silver.accounts}"
        )
    document = {
        "apiVersion": "assay/v1",
        "kind": "DatasetChecks",
        "dataset": {"name": dataset, "source": found},
        "profiles": [{"id": profile, "metrics": []}],
        "expectations": [],
    }
    return yaml.safe_dump(document, sort_keys=False)


def _load(text: str, what: str) -> Any:
    from assay.lang import yamlsafe

    try:
        return yamlsafe.load(text, filename=what) if text and text.strip() else None
    except yamlsafe.YAMLProblem as error:
        raise ConfigError(f"{what}: {error.reason} (line {error.line}, column {error.column})") from None


def _dump(value: Any) -> str:
    return yaml.safe_dump(value, sort_keys=False, allow_unicode=True, width=4096)
