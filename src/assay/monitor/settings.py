"""The drift monitor's settings of one dataset: the window, the sensitivity, which columns are
categories, which judgements run for which column, and how missing values are counted.

They are values: a plain dataset file (``checks/<dataset>.yaml`` without ``kind:``) is read by
:func:`from_document`, and a check document (``kind: DatasetChecks``), which owns a dataset's
owners, tier, monitor and gate settings, composes them from its ``monitor:`` section
(:meth:`assay.platform.checks.document.Document.monitor_config`). The drift judgements read
them as :class:`assay.judge.drift.Settings` (:meth:`DatasetConfig.drift`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from assay import privacy
from assay.errors import ConfigError
from assay.judge.drift import Settings, Window

KINDS = (
    "null_rate",
    "new_value",
    "volume",
    "range",
    "schema",
    "shape",
    "default_value",
    "swap",
    "vanished_value",
    "duplicate_load",
)
SENSITIVITY = (0.25, 4.0)  # the range a dataset's sensitivity may take


class DatasetConfig(BaseModel):
    """A dataset's monitoring configuration (YAML; ``<workspace>/checks/<dataset>.yaml`` by default).

    >>> document = {"categorical": ["venue_id"], "null_rate": {"conditioned": {"fill": "row_count"}}}
    >>> DatasetConfig.model_validate(document).window
    'last:20'
    >>> config = DatasetConfig.model_validate({"checks": {"range": False},
    ...                                        "columns": {"note": {"checks": {"null_rate": False}}}})
    >>> config.enabled("range"), config.enabled("null_rate", "note"), config.enabled("null_rate", "qty")
    (False, False, True)
    """

    model_config = ConfigDict(extra="forbid")

    dataset: str | None = None
    window: str = "last:20"
    sensitivity: float = Field(
        default=1.0,
        ge=SENSITIVITY[0],
        le=SENSITIVITY[1],
        description="divides the bands' sigma multipliers: 2 alerts at half the distance, 0.5 at twice",
    )
    categorical: list[str] = Field(
        default_factory=list, description="columns whose values are counted, beyond text and booleans"
    )
    not_categorical: list[str] = Field(
        default_factory=list, description="text or boolean columns that are never a category"
    )
    domain_columns: list[str] = Field(
        default_factory=list, description="the gate holds rows with an undecided new value here"
    )
    checks: DatasetChecks = Field(default_factory=lambda: DatasetChecks())
    columns: dict[str, ColumnConfig] = Field(default_factory=dict)
    null_rate: NullRateConfig = Field(default_factory=lambda: NullRateConfig())
    # The gate's section of a plain dataset file: the gate validates and reads it (gate.config).
    gate: dict[str, Any] | None = Field(
        default=None, description="the gate's key, order and contributor columns"
    )
    # Read from the dataset's check document when it has one (docs/checks.md): kept in the runs.
    owners: dict[str, str] | None = Field(default=None, description="the dataset's owners (team, contact)")
    tier: int | None = Field(default=None, ge=0, le=3, description="the dataset's tier, 0 the most important")
    # Columns masked in every output (docs/privacy.md): a check document's dataset.classified,
    # or this section of a plain dataset file
    classified: dict[str, list[str]] = Field(
        default_factory=dict, description="columns never shown in clear, by class: {pii: [email]}"
    )

    @field_validator("classified", mode="after")
    @classmethod
    def _classes(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        privacy.classes(value)
        return value

    @field_validator("window")
    @classmethod
    def _window(cls, value: str) -> str:
        Window.parse(value)
        return value

    @model_validator(mode="after")
    def _overrides(self) -> DatasetConfig:
        both = sorted(set(self.categorical) & set(self.not_categorical))
        if both:
            raise ValueError(f"column(s) {', '.join(both)} cannot be both categorical and not_categorical")
        return self

    def enabled(self, kind: str, column: str | None = None) -> bool:
        """Whether judgement ``kind`` runs (for ``column``): a column's switch, else the dataset's."""
        name = "schema_" if kind == "schema" else kind  # ``schema`` would shadow BaseModel.schema
        own = self.columns.get(column) if column is not None else None
        switch = getattr(own.checks, name, None) if own is not None else None
        return bool(getattr(self.checks, name)) if switch is None else bool(switch)

    def drift(self) -> Settings:
        """What the drift judgements read of these settings."""
        return Settings(
            sensitivity=self.sensitivity,
            blanks=self.null_rate.blanks,
            conditioned=dict(self.null_rate.conditioned),
            enabled=self.enabled,
        )


class DatasetChecks(BaseModel):
    """Which judgements run for the whole dataset (all do by default)."""

    model_config = ConfigDict(extra="forbid")

    null_rate: bool = True
    new_value: bool = True
    volume: bool = True
    range: bool = True
    schema_: bool = Field(default=True, alias="schema")
    shape: bool = True
    default_value: bool = True
    swap: bool = True
    vanished_value: bool = True
    duplicate_load: bool = True


class ColumnChecks(BaseModel):
    """A column's own switches; unset ones follow the dataset's (volume is the dataset's only)."""

    model_config = ConfigDict(extra="forbid")

    null_rate: bool | None = None
    new_value: bool | None = None
    range: bool | None = None
    schema_: bool | None = Field(default=None, alias="schema")
    shape: bool | None = None
    default_value: bool | None = None
    swap: bool | None = None
    vanished_value: bool | None = None


class ColumnConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    checks: ColumnChecks = Field(default_factory=lambda: ColumnChecks())


class NullRateConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    conditioned: dict[str, str] = Field(
        default_factory=dict,
        description="column -> activity: 'row_count' or a metric of the same load, e.g. Column.qty.Maximum",
    )
    blanks: bool = Field(
        default=True,
        description="judge nulls plus blank text (Column.<c>.BlankCount); false: nulls only",
    )


DatasetConfig.model_rebuild()


def from_document(document: object, path: Path) -> DatasetConfig:
    """A plain dataset file's settings (its parsed YAML); a mistake is a ConfigError naming the
    file and the field.

    >>> from_document({"window": "weekday:4"}, Path("checks/trades.yaml")).window
    'weekday:4'
    >>> from_document({"windw": "last:5"}, Path("checks/trades.yaml"))
    Traceback (most recent call last):
    ...
    assay.errors.ConfigError: checks/trades.yaml: windw: Extra inputs are not permitted
    """
    try:
        return DatasetConfig.model_validate(document or {})
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'document'}: {e['msg']}" for e in error.errors()
        )
        raise ConfigError(f"{path}: {problems}") from None
