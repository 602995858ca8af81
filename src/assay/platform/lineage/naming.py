"""A dataset's OpenLineage name: where its data lives, in the naming spec's terms
(https://openlineage.io/docs/spec/naming), so that a lineage graph joins assay's events with
those of the tools that wrote or read the same data (the client's ``openlineage.client.naming``
classes say the same; tests/lineage/test_naming.py checks each case against them):

==========================  ============================  ==================================
where the data is           namespace                     name
==========================  ============================  ==================================
a local file                ``file``                      its absolute path
files matched by a pattern  ``file``                      the folder holding them
an S3 object or pattern     ``s3://<bucket>``             its key (the folder, for a pattern)
an Iceberg table            its location's (file, s3)     its location's path
a DuckDB database's table   ``file``                      ``<database path>/<table>``
a PostgreSQL table          ``postgres://<host>:<port>``  ``<database>.<schema>.<table>``
==========================  ============================  ==================================

Only the location names a dataset; the name assay knows it by travels beside it (a ``symlinks``
facet, :mod:`assay.platform.lineage.events`), so that what other tools say about the location can
be mapped back to assay's dataset (lineage-aware routing reads it so).

>>> identity("/data/orders/2026-11-01.csv")
('file', '/data/orders/2026-11-01.csv')
>>> identity("s3://drops/orders/2026-11-01.csv")
('s3://drops', 'orders/2026-11-01.csv')
>>> identity("../data/*.csv", base=Path("/srv/checks"))
('file', '/srv/data')
>>> identity("s3://drops/orders/*.csv")
('s3://drops', 'orders')
>>> identity("file:///srv/warehouse/shop/orders")
('file', '/srv/warehouse/shop/orders')
>>> postgres("db.internal", 5432, "shop", "public.orders")
('postgres://db.internal:5432', 'shop.public.orders')
"""

from __future__ import annotations

import glob
import os
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlparse, urlsplit

Identity = tuple[str, str]


def identity(location: str, *, base: Path | None = None) -> Identity:
    """The (namespace, name) of the data at ``location``: a path (relative to ``base``, else the
    current folder), a ``file://`` or ``s3://`` URL, or a pattern of either (then its folder)."""
    if location.startswith("s3://") or location.startswith("s3a://"):
        parsed = urlparse(location)
        key = _unpatterned(parsed.path.lstrip("/"))
        return f"s3://{parsed.netloc}", key
    if location.startswith("file://"):
        return "file", _unpatterned(unquote(urlparse(location).path))
    path = Path(location)
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    return "file", _unpatterned(os.path.normpath(path))


def table(database: str, name: str, *, base: Path | None = None) -> Identity:
    """A table in a DuckDB database file.

    >>> table("/srv/shop.duckdb", "orders")
    ('file', '/srv/shop.duckdb/orders')
    """
    namespace, path = identity(database, base=base)
    return namespace, f"{path}/{name}"


def postgres(host: str, port: int, database: str, name: str) -> Identity:
    """A PostgreSQL table (``schema.table``; ``public`` when the name has no schema)."""
    qualified = name if "." in name else f"public.{name}"
    return f"postgres://{host}:{port}", f"{database}.{qualified}"


def postgres_url(url: str, name: str) -> Identity:
    """A PostgreSQL table from its connection URL (its user and password are never part of a name).

    >>> postgres_url("postgresql://ana:secret@db.internal:6543/analytics", "public.trades")
    ('postgres://db.internal:6543', 'analytics.public.trades')
    >>> postgres_url("postgresql://db.internal/analytics", "trades")
    ('postgres://db.internal:5432', 'analytics.public.trades')
    """
    parts = urlsplit(url)
    database = parts.path.lstrip("/") or (parts.username or "postgres")
    return postgres((parts.hostname or "localhost").lower(), parts.port or 5432, database, name)


def _unpatterned(path: str) -> str:
    """A pattern's fixed folder (``data/*.csv``: ``data``); a plain path as it is."""
    if not glob.has_magic(path):
        return path
    parts = PurePosixPath(path).parts
    fixed = []
    for part in parts:
        if glob.has_magic(part):
            break
        fixed.append(part)
    return str(PurePosixPath(*fixed)) if fixed else "/"
