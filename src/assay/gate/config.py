"""Which table a gate commits to and which of its columns mean what, from the table's
document (section ``gate:``; found by :meth:`assay.workspace.Workspace.document_for`) or the
command line.

There are no built-in defaults: a key, a statement date and a contributor column are facts about
one table (a credit bureau's ``silver.accounts``), and guessing them for any other data would
baseline rows on the wrong past without a word. A flag wins over the file; what neither gives is
a configuration error that says where to write it.

```yaml
# checks/silver.accounts.yaml
gate:
  key: account_id
  order: statement_date
  contributor_column: contributor_id
  schema: accounts_schema.yaml   # relative to this file
```
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from assay.errors import ConfigError


class GateConfig(BaseModel):
    """The ``gate:`` section of a table's configuration."""

    model_config = ConfigDict(extra="forbid")

    key: str | None = None
    order: str | None = None
    contributor_column: str | None = None
    schema_file: str | None = None

    def __init__(self, **data: object) -> None:
        if "schema" in data:  # ``schema`` reads best in YAML; pydantic reserves the attribute name
            data["schema_file"] = data.pop("schema")
        super().__init__(**data)


@dataclass(frozen=True)
class GateTable:
    """The resolved table and its columns for one gate run."""

    table: str
    key: str
    order: str
    contributor_column: str
    schema: Path | None


def resolve(
    settings: GateConfig | None,
    path: Path,
    *,
    table: str,
    key: str | None,
    order: str | None,
    contributor_column: str | None,
    schema: Path | None,
) -> GateTable:
    """The gate's table and columns: each from its flag, else from ``settings``, the ``gate:``
    section of the table's document at ``path`` (found by the platform,
    :func:`assay.platform.runs.gate.gate_table`); what neither gives names ``path``.

    >>> resolve(GateConfig(key="id", order="day"), Path("checks/t.yaml"), table="t", key=None,
    ...         order=None, contributor_column="c", schema=None).key
    'id'
    """
    configured = settings or GateConfig()

    def pick(flag: str | None, value: str | None, option: str, field: str) -> str:
        chosen = flag or value
        if not chosen:
            raise ConfigError(f"the gate needs {option}: pass it, or write gate.{field} in {path}")
        return chosen

    if schema is None and configured.schema_file:
        schema = (path.parent / configured.schema_file).resolve()
    return GateTable(
        table=table,
        key=pick(key, configured.key, "--key (the column identifying a record across loads)", "key"),
        order=pick(order, configured.order, "--order (the statement-date column)", "order"),
        contributor_column=pick(
            contributor_column,
            configured.contributor_column,
            "--contributor-column (the column holding the contributor id)",
            "contributor_column",
        ),
        schema=schema,
    )
