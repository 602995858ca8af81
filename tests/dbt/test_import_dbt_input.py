"""``assay check import-dbt`` given what a user (or a hostile manifest) may give it: a file that
is not JSON or not a manifest, a version it was not written for, a model whose name would write
outside ``--out``, documents already there, a source template it cannot read, a manifest with
nothing to convert. Each is exit 2 with a message naming the file (or the model), never a
traceback, and nothing is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from _invoke import completed
from assay.platform.checks.dbt import manifest as manifest_module

V12 = "https://schemas.getdbt.com/dbt/manifest/v12.json"
TEMPLATE = "duckdb:wh.duckdb#{schema}.{alias}"


def _manifest(path: Path, models: dict[str, dict[str, Any]], tests: dict[str, dict[str, Any]]) -> Path:
    nodes: dict[str, Any] = {}
    for uid, model in models.items():
        nodes[uid] = {"resource_type": "model", "schema": "main", **model}
    for uid, test in tests.items():
        nodes[uid] = {"resource_type": "test", "config": {"severity": "ERROR"}, **test}
    path.write_text(
        json.dumps({"metadata": {"dbt_schema_version": V12, "dbt_version": "1.8.7"}, "nodes": nodes})
    )
    return path


def _not_null(model: str, column: str = "id") -> dict[str, Any]:
    return {
        "name": f"not_null_{column}",
        "attached_node": model,
        "column_name": column,
        "test_metadata": {"name": "not_null", "kwargs": {"column_name": column}, "namespace": None},
    }


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"metadata": {"dbt_schema_version": ', "bad.json:1:"),  # cut short
        ("not json at all", "bad.json:1:1: not JSON"),
        ('{"nodes": {}}', "not a dbt manifest (no metadata.dbt_schema_version)"),
        (
            '{"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/catalog/v1.json"}}',
            "not a dbt manifest",
        ),
        (
            json.dumps(
                {"metadata": {"dbt_schema_version": V12.replace("v12", "v7"), "dbt_version": "1.3.0"}}
            ),
            "manifest schema v7 (dbt 1.3.0) is not supported; import-dbt reads v10 to v12",
        ),
        ('{"metadata": {"dbt_schema_version": "' + V12 + '"}, "nodes": []}', "nodes is not an object"),
        ("[" * 100_000, "nested too deeply"),
    ],
)
def test_a_file_that_is_not_a_supported_manifest_is_exit_2_naming_it(
    tmp_path: Path, text: str, said: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    done = completed(
        "check", "import-dbt", str(bad), "--source-template", TEMPLATE, "--out", str(tmp_path / "out")
    )
    assert done.returncode == 2, done
    assert said in done.stderr and str(bad) in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_manifest_past_the_size_limit_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = _manifest(
        tmp_path / "manifest.json", {"model.p.a": {"name": "a"}}, {"test.p.t": _not_null("model.p.a")}
    )
    monkeypatch.setattr(manifest_module, "MAX_BYTES", big.stat().st_size - 1)
    done = completed("check", "import-dbt", str(big), "--source-template", TEMPLATE)
    assert done.returncode == 2
    assert f"{big}: {big.stat().st_size:,} bytes; a manifest may be at most" in done.stderr


def test_a_missing_file_and_a_folder_are_exit_2(tmp_path: Path) -> None:
    for path, said in ((tmp_path / "nope.json", "no such file"), (tmp_path, "is a folder")):
        done = completed("check", "import-dbt", str(path), "--source-template", TEMPLATE)
        assert done.returncode == 2 and said in done.stderr, done


def test_a_model_whose_name_or_schema_would_leave_the_folder_is_not_converted_and_nothing_escapes(
    tmp_path: Path,
) -> None:
    manifest = _manifest(
        tmp_path / "manifest.json",
        {
            "model.p.ok": {"name": "ok"},
            "model.p.x": {"name": "../x"},
            "model.p.abs": {"name": "/tmp/abs"},
            "model.p.s": {"name": "s", "schema": "../../etc"},
        },
        {f"test.p.{n}": _not_null(f"model.p.{n}") for n in ("ok", "x", "abs", "s")},
    )
    out = tmp_path / "deep" / "out"
    done = completed(
        "check",
        "import-dbt",
        str(manifest),
        "--source-template",
        "data/{schema}/{name}.parquet",
        "--out",
        str(out),
    )
    assert done.returncode == 0, done
    assert sorted(p.name for p in out.iterdir()) == ["ok.yaml"]
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.yaml")) == [
        "deep/out/ok.yaml"
    ]
    assert "not_null_id (model ../x): model: name '../x' is not a plain name" in done.stderr
    assert "(model /tmp/abs): model: name '/tmp/abs' is not a plain name" in done.stderr
    assert "(model s): model: its schema '../../etc' is not a plain name" in done.stderr


def test_existing_documents_are_kept_unless_force_and_a_symlink_out_is_refused(tmp_path: Path) -> None:
    manifest = _manifest(
        tmp_path / "manifest.json",
        {"model.p.a": {"name": "a"}, "model.p.b": {"name": "b"}},
        {"test.p.a": _not_null("model.p.a"), "test.p.b": _not_null("model.p.b")},
    )
    out = tmp_path / "checks"
    out.mkdir()
    (out / "b.yaml").write_text("mine\n")
    args = ("check", "import-dbt", str(manifest), "--source-template", TEMPLATE, "--out", str(out))
    done = completed(*args)
    assert done.returncode == 2
    assert f"{out / 'b.yaml'} already exist(s); nothing was written (--force replaces them)" in done.stderr
    assert not (out / "a.yaml").exists() and (out / "b.yaml").read_text() == "mine\n"
    done = completed(*args, "--force")
    assert done.returncode == 0, done
    assert "kind: DatasetChecks" in (out / "b.yaml").read_text()
    assert f"wrote {out / 'a.yaml'}: a, 1 expectation(s)" in done.stdout
    # a document's file that is a symlink pointing elsewhere is never written through
    outside = tmp_path / "outside.yaml"
    outside.write_text("kept\n")
    (out / "a.yaml").unlink()
    (out / "a.yaml").symlink_to(outside)
    done = completed(*args, "--force")
    assert done.returncode == 2 and "would be written outside the folder" in done.stderr
    assert outside.read_text() == "kept\n"


def test_a_manifest_with_nothing_to_convert_is_exit_2_and_names_each_test(tmp_path: Path) -> None:
    manifest = _manifest(
        tmp_path / "manifest.json",
        {"model.p.a": {"name": "a"}, "model.p.b": {"name": "b"}},
        {
            "test.p.r": {
                "name": "relationships_a_b_id",
                "attached_node": "model.p.a",
                "column_name": "b_id",
                "test_metadata": {"name": "relationships", "kwargs": {"to": "ref('b')", "field": "id"}},
            },
            "test.p.w": {**_not_null("model.p.a"), "config": {"where": "day >= '{{ var(\"since\") }}'"}},
            "test.p.e": {**_not_null("model.p.b", "email"), "column_name": "lower(email)"},
        },
    )
    done = completed("check", "import-dbt", str(manifest), "--source-template", TEMPLATE, "--json")
    assert done.returncode == 2
    assert f"{manifest}: none of its 3 tests could be converted; no document was written" in done.stderr
    assert "relationships_a_b_id (model a): relationships to ref('b') (id)" in done.stderr
    assert "not_null_id (model a): where" in done.stderr and "is Jinja" in done.stderr
    assert "(model b): column_name 'lower(email)' is an expression, not a column" in done.stderr
    report = json.loads(done.stdout)
    assert report["documents"] == [] and len(report["not_converted"]) == 3
    empty = _manifest(tmp_path / "empty.json", {"model.p.a": {"name": "a"}}, {})
    done = completed("check", "import-dbt", str(empty), "--source-template", TEMPLATE)
    assert done.returncode == 2 and "it has no tests" in done.stderr


@pytest.mark.parametrize(
    ("template", "said"),
    [
        ("duckdb:wh.duckdb", "a duckdb source is duckdb:PATH#TABLE"),
        ("postgres:postgresql://h/db", "a postgres source is postgres:URL#TABLE"),
        ("data/{table}.parquet", "{table} is not one of {database}, {schema}, {name}, {alias}"),
        ("data/{name!r}.parquet", "{name!r} is not one of"),
        ("data/{name.parquet", "--source-template 'data/{name.parquet'"),
    ],
)
def test_a_source_template_it_cannot_read_is_exit_2(tmp_path: Path, template: str, said: str) -> None:
    manifest = _manifest(
        tmp_path / "m.json", {"model.p.a": {"name": "a"}}, {"test.p.a": _not_null("model.p.a")}
    )
    done = completed(
        "check", "import-dbt", str(manifest), "--source-template", template, "--out", str(tmp_path / "o")
    )
    assert done.returncode == 2 and said in done.stderr, done
    assert not (tmp_path / "o").exists()


def test_the_source_template_places_each_model_and_where_becomes_a_profile_filter(tmp_path: Path) -> None:
    manifest = _manifest(
        tmp_path / "manifest.json",
        {"model.p.a": {"name": "a", "alias": "a_table", "database": "wh", "schema": "sales"}},
        {
            "test.p.a": {**_not_null("model.p.a"), "config": {"where": "region = 'EU'", "severity": "warn"}},
            "test.p.b": {**_not_null("model.p.a", "day"), "config": {"where": "region =  'EU'"}},
        },
    )
    for template, source in (
        (
            "postgres:postgresql://wh.internal:5432/{database}#{schema}.{alias}",
            "postgres:\n      url: postgresql://wh.internal:5432/wh\n      table: sales.a_table",
        ),
        ("iceberg:{schema}.{alias}", "iceberg: sales.a_table"),
        ("../data/{schema}/{name}/*.parquet", "path: ../data/sales/a/*.parquet"),
    ):
        done = completed("check", "import-dbt", str(manifest), "--source-template", template)
        assert done.returncode == 0, done
        assert source in done.stdout
        # the same where (spaces aside) is one profile, whose filter both tests read
        assert done.stdout.count("filter: region = 'EU'") == 1
        assert (
            "severity: warning" in done.stdout and "converted 2 of 2 tests into 1 document(s)" in done.stderr
        )


def test_a_seed_s_tests_are_converted_and_a_source_s_are_named(tmp_path: Path) -> None:
    manifest = _manifest(
        tmp_path / "manifest.json",
        {"seed.p.country_codes": {"name": "country_codes", "resource_type": "seed"}},
        {
            "test.p.seed": _not_null("seed.p.country_codes", "code"),
            "test.p.src": {
                **_not_null("source.p.raw.events", "event_id"),
                "name": "source_not_null_raw_events",
            },
        },
    )
    done = completed("check", "import-dbt", str(manifest), "--source-template", TEMPLATE, "--json")
    assert done.returncode == 0, done
    report = json.loads(done.stdout)
    assert [(d["model"], d["dataset"]) for d in report["documents"]] == [
        ("country_codes", "main.country_codes")
    ]
    assert report["not_converted"] == [
        {
            "test": "source_not_null_raw_events",
            "model": "source.p.raw.events",
            "reason": "source.p.raw.events is not a model, seed or snapshot (sources are not imported)",
        }
    ]
