"""An Open Data Contract Standard v3 contract's ``quality`` section as an assay check document
(``assay check import-odcs``).

ODCS (bitol-io/open-data-contract-standard, docs/data-quality.md) attaches quality entries to a
schema object (``rowCount``, multi-column ``duplicateValues``, ``sql``) and to its properties
(``nullValues``, ``missingValues``, ``invalidValues``, ``duplicateValues``). Each entry becomes an
expectation on a metric of one profile, or a DQDL ``rule:`` where assay has no metric for it, and
only where the two mean the same; every other entry is named, both in a comment at the top of the
document and in :attr:`ImportResult.unsupported`. docs/checks-convert.md has the table.

>>> result = import_odcs('''
... apiVersion: v3.1.0
... kind: DataContract
... id: orders-contract
... name: orders
... version: 1.0.0
... status: active
... schema:
...   - name: orders
...     quality:
...       - {metric: rowCount, mustBeGreaterThan: 0}
...     properties:
...       - name: order_id
...         quality:
...           - {metric: nullValues, mustBe: 0, severity: error, dimension: completeness}
... ''', filename="orders.odcs.yaml")
>>> print(result.text)  # doctest: +ELLIPSIS
# Imported from the ODCS contract orders.odcs.yaml (orders-contract 1.0.0) by assay check import-odcs.
# Not imported (no equivalent in assay):
#   - servers: no server maps to a source assay reads (local path, duckdb, postgres); source is a placeholder
apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: orders.orders
  source:
    path: TODO
profiles:
- id: contract
  metrics:
  - row_count
  - null_count:
    - order_id
expectations:
- id: orders-row-count
  metric: contract.row_count
  expect: '> 0'
  severity: error
- id: order_id-null-values
  metric: contract.null_count(order_id)
  expect: = 0
  severity: error
  description: 'dimension: completeness'
<BLANKLINE>
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from assay.errors import ConfigError
from assay.lang import yamlsafe
from assay.platform.checks.document import parse_document
from assay.platform.checks.odcs_quality import ALIASES, OPERATORS, PROFILE, SEVERITIES, Builder, Unsupported

__all__ = ["ALIASES", "OPERATORS", "PROFILE", "SEVERITIES", "ImportResult", "Unsupported", "import_odcs"]


@dataclass(frozen=True)
class ImportResult:
    """The check document's text, and each contract entry it could not carry (also listed in a
    comment at the top of ``text``)."""

    text: str
    unsupported: tuple[str, ...]


def import_odcs(text: str, *, filename: str, schema: str | None = None) -> ImportResult:
    """The check document for one schema object of an ODCS v3 contract (the first, or the one
    named ``schema``). A contract that is not ODCS v3 YAML is a :class:`ConfigError`. See the
    module's docstring for an example."""
    contract = _load(text, filename)
    objects = [o for o in contract.get("schema") or () if isinstance(o, Mapping)]
    if not objects:
        raise ConfigError(f"{filename}: the contract has no schema objects, so no quality entries to import")
    if schema is not None:
        chosen = [o for o in objects if o.get("name") == schema]
        if not chosen:
            names = ", ".join(str(o.get("name")) for o in objects)
            raise ConfigError(f"{filename}: no schema object named '{schema}' (objects: {names})")
        target = chosen[0]
    else:
        target = objects[0]
    builder = Builder(target)
    for other in objects:
        if other is not target:
            builder.unsupported.append(
                f"schema object '{other.get('name')}': one check document per dataset "
                f"(import it on its own with schema='{other.get('name')}')"
            )
    builder.read_object()
    builder.unsupported.extend(_service_levels(contract))
    document = {
        "apiVersion": "assay/v1",
        "kind": "DatasetChecks",
        "dataset": _dataset(contract, target, builder.unsupported),
        "profiles": [builder.profile()],
        "expectations": builder.expectations,
    }
    version = f" {contract['version']}" if contract.get("version") else ""
    head = [
        f"# Imported from the ODCS contract {filename} ({contract.get('id', contract.get('name', '?'))}"
        f"{version}) by assay check import-odcs."
    ]
    if builder.unsupported:
        head.append("# Not imported (no equivalent in assay):")
        head.extend(f"#   - {' '.join(item.split())}" for item in builder.unsupported)
    body = yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100_000)
    out = "\n".join(head) + "\n" + body
    parse_document(out, filename=filename)  # what is written must be a valid document
    return ImportResult(out, tuple(builder.unsupported))


def _load(text: str, filename: str) -> Mapping[str, Any]:
    contract = yamlsafe.load(text, filename=filename)
    if not isinstance(contract, Mapping):
        raise ConfigError(f"{filename}: an ODCS contract is a YAML mapping (apiVersion, kind, schema, ...)")
    if contract.get("kind", "DataContract") != "DataContract":
        raise ConfigError(f"{filename}: kind is '{contract.get('kind')}', not DataContract")
    version = str(contract.get("apiVersion", ""))
    if not re.match(r"^v?3\.", version):
        raise ConfigError(f"{filename}: apiVersion '{version}' is not ODCS v3 (v3.0.0, v3.1.0, ...)")
    return contract


# --- the dataset ------------------------------------------------------------------------------------


def _dataset(
    contract: Mapping[str, Any], target: Mapping[str, Any], unsupported: list[str]
) -> dict[str, Any]:
    base = contract.get("name") or contract.get("id")
    name = f"{base}.{target.get('name')}" if base else str(target.get("name"))
    dataset: dict[str, Any] = {"name": name, "source": _source(contract, target, unsupported)}
    team = contract.get("team")
    if isinstance(team, Mapping) and isinstance(team.get("name"), str):
        dataset["owners"] = {"team": team["name"]}
    tags = [t for t in contract.get("tags") or () if isinstance(t, str)]
    if tags:
        dataset["tags"] = tags
    description = contract.get("description")
    if isinstance(description, Mapping):
        description = description.get("purpose") or description.get("usage")
    if isinstance(description, str) and description.strip():
        dataset["description"] = " ".join(description.split())
    return dataset


def _service_levels(contract: Mapping[str, Any]) -> list[str]:
    """The contract's ``slaProperties`` (latency, retention, frequency, ...), each named as not
    imported: a service level is a promise about delivery, not a quality entry of the schema, and
    a freshness bound is the document's own ``freshness`` expectation (docs/checks.md), written by
    a person who knows which column carries the time.

    >>> _service_levels({"slaProperties": [{"property": "latency", "value": 4, "unit": "d"}]})
    ["slaProperties 'latency' (4 d): a service level, not a quality entry; write it as an expectation"]
    """
    found = []
    for entry in contract.get("slaProperties") or ():
        if not isinstance(entry, Mapping):
            continue
        said = " ".join(str(entry[k]) for k in ("value", "unit") if entry.get(k) is not None)
        found.append(
            f"slaProperties '{entry.get('property', '?')}'{f' ({said})' if said else ''}: "
            "a service level, not a quality entry; write it as an expectation"
        )
    return found


def _source(contract: Mapping[str, Any], target: Mapping[str, Any], unsupported: list[str]) -> dict[str, Any]:
    """The first server that is one of assay's source kinds; the table is the object's
    ``physicalName`` (else its name) in the server's ``schema``."""
    table = str(target.get("physicalName") or target.get("name"))
    for server in contract.get("servers") or ():
        if not isinstance(server, Mapping):
            continue
        kind = str(server.get("type", "")).lower()
        if kind == "local" and server.get("path"):
            return {"path": str(server["path"])}
        if kind == "duckdb" and server.get("database"):
            return {
                "duckdb": {
                    "path": str(server["database"]),
                    "table": f"{server.get('schema') or 'main'}.{table}",
                }
            }
        if kind in ("postgres", "postgresql") and server.get("host") and server.get("database"):
            url = f"postgresql://{server['host']}:{server.get('port') or 5432}/{server['database']}"
            return {"postgres": {"url": url, "table": f"{server.get('schema') or 'public'}.{table}"}}
    kinds = sorted({str(s.get("type")) for s in contract.get("servers") or () if isinstance(s, Mapping)})
    seen = f" (servers: {', '.join(kinds)})" if kinds else ""
    unsupported.append(
        f"servers: no server maps to a source assay reads (local path, duckdb, postgres){seen}; "
        "source is a placeholder"
    )
    return {"path": "TODO"}
