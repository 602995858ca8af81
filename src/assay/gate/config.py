"""Which table a gate commits to and which of its columns mean what, from the table's
configuration (``<workspace>/checks/<table>.yaml``, section ``gate:``) or the command line.

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
from assay.workspace import Workspace


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
    workspace: Workspace,
    *,
    table: str | None,
    key: str | None,
    order: str | None,
    contributor_column: str | None,
    schema: Path | None,
) -> GateTable:
    """The gate's table and columns: each from its flag, else from the table's configuration.

    Without ``--table``, the one table of the workspace whose configuration has a ``gate:``
    section is chosen; none or several is an error that names them."""
    from assay.platform.checks.document import find_document
    from assay.platform.checks.settings import load_config

    checks = workspace.root / "checks"
    if table is None:
        # A table's configuration: checks/<table>.yaml, or a check document naming the table
        # as its dataset (the document's gate: section).
        candidates = (
            sorted(
                config.dataset or path.stem
                for path in checks.glob("*.yaml")
                if path.is_file() and (config := load_config(path)).gate is not None
            )
            if checks.is_dir()
            else []
        )
        if len(candidates) != 1:
            found = (
                f"the workspace configures {', '.join(candidates)}"
                if candidates
                else (f"no table in {checks} has a 'gate:' section")
            )
            raise ConfigError(f"say which table to commit to with --table ({found})")
        table = candidates[0]
    path = checks / f"{table}.yaml"
    if not path.is_file():
        path = find_document(checks, table) or path
    settings = GateConfig.model_validate((load_config(path).gate if path.is_file() else None) or {})

    def pick(flag: str | None, configured: str | None, option: str, field: str) -> str:
        chosen = flag or configured
        if not chosen:
            raise ConfigError(f"the gate needs {option}: pass it, or write gate.{field} in {path}")
        return chosen

    if schema is None and settings.schema_file:
        schema = (path.parent / settings.schema_file).resolve()
    return GateTable(
        table=table,
        key=pick(key, settings.key, "--key (the column identifying a record across loads)", "key"),
        order=pick(order, settings.order, "--order (the statement-date column)", "order"),
        contributor_column=pick(
            contributor_column,
            settings.contributor_column,
            "--contributor-column (the column holding the contributor id)",
            "contributor_column",
        ),
        schema=schema,
    )
