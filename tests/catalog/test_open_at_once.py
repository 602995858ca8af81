"""Machines opening a shared PostgreSQL catalog for the first time at one instant: each finds the
catalog's own tables missing and creates them, and the losers (PostgreSQL's duplicate table, or
the duplicate type behind it) try again and find them made; then all create the same Iceberg
table at once, and one table exists with the schema every one of them asked for.

Threads, each with its own catalog and connections, released by one barrier: the window between
PyIceberg's look for its tables and their creation is narrow, and processes (which take seconds
to import) seldom meet in it; three threads on a new database met in it in 9 of 8 rounds."""

from __future__ import annotations

import threading
from pathlib import Path

import pyarrow as pa

from _processes import TIMEOUT_SECONDS
from assay.workspace import Workspace
from pgserver import PostgresServer

OPENERS = 3
ROUNDS = 3
SCHEMA = pa.schema([("contributor_id", pa.string()), ("id", pa.int64())])


def test_machines_opening_a_new_postgresql_catalog_at_once_share_one_table(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    for round_ in range(ROUNDS):
        url = postgres_server.create_database()
        sites = []
        for n in range(OPENERS):
            site = tmp_path / f"round-{round_}" / f"machine-{n}"
            site.mkdir(parents=True)
            (site / "assay.yaml").write_text(
                f"catalog:\n  type: sql\n  uri: {url}\n  warehouse: {tmp_path / f'lake-{round_}'}\n"
            )
            sites.append(site)
        barrier = threading.Barrier(OPENERS, timeout=TIMEOUT_SECONDS)
        failures: list[BaseException] = []

        def open_and_create(
            site: Path, barrier: threading.Barrier = barrier, failures: list[BaseException] = failures
        ) -> None:
            try:
                barrier.wait()
                with Workspace(site).warehouse() as warehouse:
                    warehouse.create("silver.t", SCHEMA, partition_by=["contributor_id"])
            except BaseException as error:  # the test's thread reports it below
                failures.append(error)

        threads = [threading.Thread(target=open_and_create, args=(s,)) for s in sites]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(TIMEOUT_SECONDS)
        assert failures == []
        with Workspace(sites[0]).warehouse() as warehouse:
            (table,) = warehouse.tables()
            assert (table.name, table.schema) == ("silver.t", SCHEMA)
