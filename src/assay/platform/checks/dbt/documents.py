"""The check documents of a dbt manifest: one per model (or seed, snapshot) with tests the import
converts, with the model's name, owner, description and tags, and its source from a template.

>>> from assay.platform.checks.dbt.manifest import parse_manifest
>>> manifest = parse_manifest('''{"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v12.json"},
... "nodes": {"model.shop.orders": {"resource_type": "model", "name": "orders", "schema": "main"},
...   "test.shop.not_null_orders_id.1a": {"resource_type": "test", "name": "not_null_orders_id",
...     "attached_node": "model.shop.orders", "column_name": "id",
...     "test_metadata": {"name": "not_null", "kwargs": {"column_name": "id"}},
...     "config": {"severity": "warn"}}}}''',
... filename="manifest.json")
>>> result = import_dbt(manifest, SourceTemplate.parse("duckdb:shop.duckdb#{schema}.{alias}"))
>>> print(result.documents[0].text)  # doctest: +ELLIPSIS
# Imported from the dbt manifest manifest.json (model.shop.orders) by assay check import-dbt.
apiVersion: assay/v1
kind: DatasetChecks
dataset:
  name: main.orders
  source:
    duckdb:
      path: shop.duckdb
      table: main.orders
profiles:
- id: dbt
  metrics:
  - null_count:
    - id
expectations:
- id: not_null_orders_id
  metric: dbt.null_count(id)
  expect: = 0
  severity: warning
  description: dbt test not_null (test.shop.not_null_orders_id.1a)
<BLANKLINE>
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from assay.errors import ConfigError
from assay.platform.checks.dbt.generic import NotConverted, convert, severity
from assay.platform.checks.dbt.manifest import DbtTest, Manifest, Relation
from assay.platform.checks.document import METRIC_KINDS, parse_document

PLACEHOLDERS = ("database", "schema", "name", "alias")
"""What a source template may name of a model: dbt's ``database`` and ``schema``, the model's
``name``, and its ``alias`` (the table's name in the warehouse; dbt's default is the name)."""

KINDS = ("duckdb", "postgres", "iceberg", "path")
"""The source kinds of a check document (docs/checks.md) a template can write."""

PROFILE = "dbt"
"""The profile of the tests without a filter; tests with a ``where`` get ``dbt_where_1``, ..."""

_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_$-]*$")
_ID_CHARS = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True)
class SourceTemplate:
    """Where a model's table lives, with placeholders: ``duckdb:PATH#TABLE``,
    ``postgres:URL#TABLE``, ``iceberg:TABLE`` or a file path (``path:`` optional).

    >>> SourceTemplate.parse("postgres:postgresql://wh:5432/analytics#{schema}.{alias}").kind
    'postgres'
    """

    kind: str
    parts: tuple[str, ...]  # (path or URL, table) for duckdb and postgres; one part otherwise

    @classmethod
    def parse(cls, text: str) -> SourceTemplate:
        kind, _, rest = text.partition(":")
        if kind not in KINDS or not rest:
            kind, rest = "path", text  # a file path (a Windows drive letter or s3:// is a path too)
        if kind in ("duckdb", "postgres"):
            where, hash_, table = rest.rpartition("#")
            if not hash_ or not where or not table:
                raise ConfigError(
                    f"--source-template {text!r}: a {kind} source is {kind}:"
                    f"{'PATH' if kind == 'duckdb' else 'URL'}#TABLE, e.g. {kind}:"
                    f"{'warehouse.duckdb' if kind == 'duckdb' else 'postgresql://host/db'}#{{schema}}.{{alias}}"
                )
            parts: tuple[str, ...] = (where, table)
        else:
            parts = (rest,)
        for part in parts:
            try:
                fields = [(name, spec, conv) for _, name, spec, conv in string.Formatter().parse(part)]
            except ValueError as error:
                raise ConfigError(f"--source-template {text!r}: {error} (write {{{{ for a brace)") from None
            for name, spec, conversion in fields:
                if name is not None and (name not in PLACEHOLDERS or spec or conversion):
                    raise ConfigError(
                        f"--source-template {text!r}: {{{name}{'!' + conversion if conversion else ''}"
                        f"{':' + spec if spec else ''}}} is not one of "
                        f"{', '.join('{' + p + '}' for p in PLACEHOLDERS)}"
                    )
        return cls(kind, parts)

    def source(self, relation: Relation) -> dict[str, Any]:
        """The model's ``source:``; a placeholder whose value is missing or not a plain name
        (``../x``) raises :class:`NotConverted`: no document may point anywhere else than its
        template says."""
        values: dict[str, str] = {}
        for key in PLACEHOLDERS:
            value = relation.alias or relation.name if key == "alias" else getattr(relation, key)
            if value is not None:
                values[key] = value
        filled = []
        for part in self.parts:
            for _, placeholder, _, _ in string.Formatter().parse(part):
                if placeholder is None:
                    continue
                value = values.get(placeholder)
                if value is None:
                    raise NotConverted(f"the model has no {placeholder} for the source template")
                if not _NAME.match(value):
                    raise NotConverted(
                        f"its {placeholder} {value!r} is not a plain name (letters, digits, _ $ -), "
                        "so the source template cannot place it"
                    )
            filled.append(part.format_map(values))
        if self.kind == "duckdb":
            return {"duckdb": {"path": filled[0], "table": filled[1]}}
        if self.kind == "postgres":
            return {"postgres": {"url": filled[0], "table": filled[1]}}
        return {self.kind: filled[0]}


@dataclass(frozen=True)
class NotConvertedTest:
    """A test the import could not carry: its name, its model and why."""

    test: str
    model: str | None
    reason: str


@dataclass(frozen=True)
class ModelDocument:
    """One model's check document: ``file`` is ``<model name>.yaml``; ``tests`` pairs each
    converted test's name with its expectation's id."""

    model: str
    unique_id: str
    dataset: str
    file: str
    text: str
    tests: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class ImportResult:
    documents: tuple[ModelDocument, ...]
    not_converted: tuple[NotConvertedTest, ...]
    tests: int


def import_dbt(manifest: Manifest, template: SourceTemplate) -> ImportResult:
    """The check documents of every model with a test the import converts, and every test it
    does not, each with its reason. See the module's docstring for an example."""
    by_model: dict[str, list[DbtTest]] = {}
    skipped: list[NotConvertedTest] = []
    for test in manifest.tests:
        relation = manifest.relations.get(test.attached or "")
        if relation is None:
            where = (
                f"{test.attached} is not a model, seed or snapshot" if test.attached else "it tests no model"
            )
            skipped.append(NotConvertedTest(test.name, test.attached, f"{where} (sources are not imported)"))
            continue
        by_model.setdefault(relation.unique_id, []).append(test)
    documents: list[ModelDocument] = []
    files: dict[str, str] = {}
    for unique_id, tests in by_model.items():
        relation = manifest.relations[unique_id]
        builder = _Builder(relation)
        try:
            source = _model_source(relation, template, files)
        except NotConverted as why:
            skipped.extend(NotConvertedTest(t.name, relation.name, f"model: {why}") for t in tests)
            continue
        for test in tests:
            try:
                builder.add(test)
            except NotConverted as why:
                builder.skipped.append(NotConvertedTest(test.name, relation.name, str(why)))
        skipped.extend(builder.skipped)
        if builder.expectations:
            files[f"{relation.name}.yaml"] = unique_id
            # what dbt builds it from, where that is a model, seed or snapshot too (a source is not)
            read = [manifest.relations[u].dataset for u in relation.depends_on if u in manifest.relations]
            read = [name for name in read if name != relation.dataset]
            documents.append(builder.document(manifest.filename, source, list(dict.fromkeys(read))))
    return ImportResult(tuple(documents), tuple(skipped), len(manifest.tests))


def _model_source(relation: Relation, template: SourceTemplate, files: Mapping[str, str]) -> dict[str, Any]:
    if not _NAME.match(relation.name):
        raise NotConverted(
            f"name {relation.name!r} is not a plain name (letters, digits, _ $ -): its file <name>.yaml "
            "would not be in the output folder"
        )
    if f"{relation.name}.yaml" in files:
        raise NotConverted(f"another model, {files[relation.name + '.yaml']}, has the same name and file")
    return template.source(relation)


@dataclass
class _Builder:
    relation: Relation
    filters: dict[str | None, str] = field(default_factory=dict)  # filter -> profile id
    metrics: dict[str, list[Any]] = field(default_factory=dict)  # profile id -> metric entries
    expectations: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[NotConvertedTest] = field(default_factory=list)
    pairs: list[tuple[str, str]] = field(default_factory=list)

    def add(self, test: DbtTest) -> None:
        eid = self._id(test.name)
        check = convert(test, eid.replace("-", "_"))
        level = severity(test)
        profile = self._profile(check.filter)
        expectation: dict[str, Any] = {"id": eid}
        if check.rule is not None:
            expectation.update(rule=check.rule, profile=profile)
        else:
            assert check.metric is not None
            self._declare(profile, check.metric)
            expectation.update(metric=f"{profile}.{check.key}", expect=check.expect)
        expectation["severity"] = level
        said = test.description or f"dbt test {test.full_kind} ({test.unique_id})"
        expectation["description"] = said
        self.expectations.append(expectation)
        self.pairs.append((test.name, eid))

    def _id(self, name: str) -> str:
        base = _ID_CHARS.sub("_", name).strip("_") or "test"
        base = base if re.match(r"^[A-Za-z_]", base) else f"t_{base}"
        taken = {e["id"] for e in self.expectations}
        unique, n = base, 2
        while unique in taken or unique in METRIC_KINDS:
            unique, n = f"{base}-{n}", n + 1
        return unique

    def _profile(self, text: str | None) -> str:
        if text not in self.filters:
            filtered = sum(known is not None for known in self.filters)
            self.filters[text] = PROFILE if text is None else f"{PROFILE}_where_{filtered + 1}"
            self.metrics[self.filters[text]] = []
        return self.filters[text]

    def _declare(self, profile: str, metric: Any) -> None:
        entries = self.metrics[profile]
        if isinstance(metric, dict) and isinstance(next(iter(metric.values())), list):
            kind, columns = next(iter(metric.items()))
            for entry in entries:
                if isinstance(entry, dict) and kind in entry:
                    entry[kind].extend(c for c in columns if c not in entry[kind])
                    return
            entries.append({kind: list(columns)})
        elif metric not in entries:
            entries.append(metric)

    def document(self, filename: str, source: dict[str, Any], upstream: Sequence[str] = ()) -> ModelDocument:
        relation = self.relation
        dataset: dict[str, Any] = {"name": relation.dataset, "source": source}
        if relation.owner:
            dataset["owners"] = {"team": relation.owner}
        if relation.tags:
            dataset["tags"] = list(relation.tags)
        if relation.description:
            dataset["description"] = relation.description
        if upstream:  # the models, seeds and snapshots it is built from (docs/lineage.md)
            dataset["upstream"] = list(upstream)
        profiles = []
        for text, pid in self.filters.items():
            profile: dict[str, Any] = {"id": pid}
            if text is not None:
                profile["filter"] = text
            if self.metrics[pid]:
                profile["metrics"] = self.metrics[pid]
            profiles.append(profile)
        body = {
            "apiVersion": "assay/v1",
            "kind": "DatasetChecks",
            "dataset": dataset,
            "profiles": profiles,
            "expectations": self.expectations,
        }
        head = [
            f"# Imported from the dbt manifest {filename} ({relation.unique_id}) by assay check import-dbt."
        ]
        if self.skipped:
            head.append("# Not converted (no exact equivalent in a check document):")
            head.extend(f"#   - {' '.join(f'{s.test}: {s.reason}'.split())}" for s in self.skipped)
        text = (
            "\n".join(head) + "\n" + yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=100_000)
        )
        name = f"{relation.name}.yaml"
        parse_document(text, filename=name)  # what is written must be a valid document
        return ModelDocument(
            relation.name, relation.unique_id, dataset["name"], name, text, tuple(self.pairs)
        )


def describe(result: ImportResult) -> Sequence[dict[str, Any]]:
    """Each converted test as the JSON report lists it."""
    return [
        {"test": test, "model": doc.model, "expectation": eid, "file": doc.file}
        for doc in result.documents
        for test, eid in doc.tests
    ]
