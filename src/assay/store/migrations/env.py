"""Alembic's environment for the metric store: migrate the connection assay hands over.

Migrations run only through :func:`assay.store.database.open_database`, which opens the
transaction, takes the migration lock and passes its connection in ``config.attributes``; there is
no ``alembic.ini`` and no offline (SQL script) mode.

To add a migration, copy the newest file in ``versions/`` (the layout of ``script.py.mako``),
set ``revision`` and ``down_revision``, write the ``op`` calls with explicit constraint names
(``schema.NAMING_CONVENTION``), and change ``schema.py`` to match: a test compares the two.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from assay.store.schema import VERSION_TABLE, metadata

connection = context.config.attributes.get("connection")
if not isinstance(connection, Connection):
    raise RuntimeError(
        "the metric store migrates through assay.store.database.open_database, not alembic's CLI"
    )

context.configure(connection=connection, target_metadata=metadata, version_table=VERSION_TABLE)
with context.begin_transaction():
    context.run_migrations()
