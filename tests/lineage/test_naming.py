"""assay names datasets as the OpenLineage client's own naming helpers do (openlineage.client.naming)."""

from __future__ import annotations

from pathlib import Path

from openlineage.client.naming import dataset as naming

from assay.platform.lineage.naming import identity, postgres, postgres_url


def test_a_local_file_is_named_as_the_client_names_it() -> None:
    spec = naming.LocalFileSystem(path="/data/orders/2026-11-01.csv")
    assert identity("/data/orders/2026-11-01.csv") == (spec.get_namespace(), spec.get_name())
    # relative to the folder it is read from, as the run reads it
    assert identity("orders/day.csv", base=Path("/data")) == ("file", "/data/orders/day.csv")


def test_an_s3_object_is_named_as_the_client_names_it() -> None:
    spec = naming.S3(bucket_name="drops", object_key="orders/2026-11-01.csv")
    assert identity("s3://drops/orders/2026-11-01.csv") == (spec.get_namespace(), spec.get_name())


def test_a_postgres_table_is_named_as_the_client_names_it() -> None:
    spec = naming.Postgres(host="db.internal", port="5432", database="shop", schema="public", table="orders")
    assert postgres("db.internal", 5432, "shop", "orders") == (spec.get_namespace(), spec.get_name())
    # a check document's source, from its URL: the credentials are no part of the name
    url = "postgresql://ana:secret@db.internal:5432/shop"
    assert postgres_url(url, "public.orders") == (spec.get_namespace(), spec.get_name())


def test_a_pattern_is_the_folder_of_its_files() -> None:
    assert identity("/data/orders/*.csv") == ("file", "/data/orders")
    assert identity("s3://drops/orders/2026-*/day.csv") == ("s3://drops", "orders")
