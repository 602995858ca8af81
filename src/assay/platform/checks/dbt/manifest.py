"""The parts of a dbt manifest (``target/manifest.json``) that the import reads: the models (and
seeds and snapshots) tests are attached to, and each generic test with its name, namespace,
arguments and config.

A manifest is user input: it is read within a size limit and refused, as a :class:`ConfigError`
naming the file, when it is not JSON, not a dbt manifest, or of a schema version the import was
not written for. dbt 1.7 writes ``manifest/v11.json``, 1.8 and later ``v12.json``; a test's
``attached_node`` (the model it tests) is there since v10 (dbt 1.6).

>>> m = parse_manifest('''{"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v12.json"},
...   "nodes": {"model.shop.orders": {"resource_type": "model", "name": "orders", "schema": "main"}}}''',
...   filename="manifest.json")
>>> m.version, [r.name for r in m.relations.values()], m.tests
(12, ['orders'], ())
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import ConfigError

MAX_BYTES = 256 * 1024 * 1024
"""At most 256 MiB. Manifests grow with a project: a 3,000-model project's is about 60 MB; json
reads 256 MB in a few seconds and some GB of memory, which is the most a command on a laptop
should take. Above it the file is refused before it is read."""

VERSIONS = range(10, 13)
"""The manifest schema versions read: v10 (dbt 1.6), v11 (1.7), v12 (1.8 and later)."""

RELATIONS = ("model", "seed", "snapshot")
"""The resource types a check document can check: each is a table (or view) in the warehouse."""

_VERSION = re.compile(r"/manifest/v(\d+)\.json$")


@dataclass(frozen=True)
class Relation:
    """A model (or seed, snapshot): where it lives and what its YAML says about it."""

    unique_id: str
    resource_type: str
    name: str
    database: str | None
    schema: str | None
    alias: str | None
    description: str
    tags: tuple[str, ...]
    owner: str | None
    depends_on: tuple[str, ...] = ()  # the unique ids of the nodes it is built from

    @property
    def dataset(self) -> str:
        """The name of its check document's dataset: ``schema.name`` (its name without a schema)."""
        return f"{self.schema}.{self.name}" if self.schema else self.name


@dataclass(frozen=True)
class DbtTest:
    """One test node: a generic test has ``kind`` (``test_metadata.name``); a singular test
    (a SQL file) has none."""

    unique_id: str
    name: str
    kind: str | None
    namespace: str | None
    kwargs: Mapping[str, Any]
    column: str | None
    config: Mapping[str, Any]
    attached: str | None  # the unique id of the node it tests
    description: str

    @property
    def full_kind(self) -> str:
        """``not_null``, ``dbt_expectations.expect_column_values_to_be_between``."""
        return f"{self.namespace}.{self.kind}" if self.namespace else str(self.kind)


@dataclass(frozen=True)
class Manifest:
    filename: str
    version: int
    project: str | None
    relations: Mapping[str, Relation] = field(default_factory=dict)
    tests: tuple[DbtTest, ...] = ()


def load_manifest(path: Path) -> Manifest:
    """The manifest at ``path``; see :func:`parse_manifest`. A missing, oversized, unreadable or
    non-UTF-8 file is a :class:`ConfigError` naming it."""
    try:
        size = path.stat().st_size
        if path.is_dir():
            raise ConfigError(f"{path}: is a folder, not a dbt manifest (target/manifest.json)")
        if size > MAX_BYTES:
            raise ConfigError(
                f"{path}: {size:,} bytes; a manifest may be at most {MAX_BYTES:,} bytes (256 MiB)"
            )
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file (dbt writes target/manifest.json on dbt compile)") from None
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None
    return parse_manifest(text, filename=str(path))


def parse_manifest(text: str, *, filename: str) -> Manifest:
    """A dbt manifest's text: JSON whose ``metadata.dbt_schema_version`` is a supported version,
    with ``nodes``. Anything else is a :class:`ConfigError` that names ``filename``."""
    if len(text) > MAX_BYTES:
        raise ConfigError(
            f"{filename}: larger than {MAX_BYTES:,} bytes (256 MiB), the most a manifest may be"
        )
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigError(
            f"{filename}:{error.lineno}:{error.colno}: not JSON ({error.msg}); is it target/manifest.json?"
        ) from None
    except RecursionError:
        raise ConfigError(f"{filename}: JSON nested too deeply to be a dbt manifest") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("metadata"), dict):
        raise ConfigError(f"{filename}: not a dbt manifest (no metadata.dbt_schema_version)")
    schema = raw["metadata"].get("dbt_schema_version")
    found = _VERSION.search(schema) if isinstance(schema, str) else None
    if found is None:
        raise ConfigError(f"{filename}: not a dbt manifest (metadata.dbt_schema_version is {schema!r})")
    version = int(found.group(1))
    if version not in VERSIONS:
        raise ConfigError(
            f"{filename}: manifest schema v{version} (dbt {raw['metadata'].get('dbt_version', '?')}) is not "
            f"supported; import-dbt reads v{VERSIONS[0]} to v{VERSIONS[-1]} (dbt 1.6 and later)"
        )
    nodes = raw.get("nodes")
    if not isinstance(nodes, dict):
        raise ConfigError(f"{filename}: not a dbt manifest (nodes is not an object)")
    relations: dict[str, Relation] = {}
    tests: list[DbtTest] = []
    for unique_id, node in nodes.items():
        if not isinstance(node, dict):
            continue
        kind = node.get("resource_type")
        if kind in RELATIONS:
            relations[unique_id] = _relation(unique_id, node)
        elif kind == "test":
            tests.append(_test(unique_id, node))
    project = raw["metadata"].get("project_name")
    return Manifest(filename, version, project if isinstance(project, str) else None, relations, tuple(tests))


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _relation(unique_id: str, node: Mapping[str, Any]) -> Relation:
    config = _object(node.get("config"))
    meta = {**_object(config.get("meta")), **_object(node.get("meta"))}
    listed = node.get("tags")
    tags = [t for t in listed if isinstance(t, str)] if isinstance(listed, list) else []
    depends = _object(node.get("depends_on")).get("nodes")
    return Relation(
        unique_id=unique_id,
        resource_type=str(node.get("resource_type")),
        name=str(node.get("name") or unique_id.rsplit(".", 1)[-1]),
        database=_text(node.get("database")),
        schema=_text(node.get("schema")),
        alias=_text(node.get("alias")),
        description=" ".join(str(node.get("description") or "").split()),
        tags=tuple(tags),
        owner=_text(meta.get("owner")),
        depends_on=tuple(n for n in depends if isinstance(n, str)) if isinstance(depends, list) else (),
    )


def _test(unique_id: str, node: Mapping[str, Any]) -> DbtTest:
    metadata = node.get("test_metadata") if isinstance(node.get("test_metadata"), dict) else None
    config = _object(node.get("config"))
    attached = _text(node.get("attached_node"))
    if attached is None:  # older manifests: the first model the test depends on
        depends = _object(node.get("depends_on")).get("nodes")
        attached = (
            next((n for n in depends if isinstance(n, str)), None) if isinstance(depends, list) else None
        )
    kwargs = _object(metadata.get("kwargs")) if metadata else {}
    column = _text(node.get("column_name")) or _text(kwargs.get("column_name"))
    return DbtTest(
        unique_id=unique_id,
        name=str(node.get("name") or unique_id),
        kind=_text(metadata.get("name")) if metadata else None,
        namespace=_text(metadata.get("namespace")) if metadata else None,
        kwargs=kwargs,
        column=column,
        config=config,
        attached=attached,
        description=" ".join(str(node.get("description") or "").split()),
    )
