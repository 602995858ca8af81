"""Schedules: the process that holds a tick, so that a tick whose process was killed is found.

A pass records itself (``host:pid:start``, as a run records its owner) on each tick it claims,
and a queue worker on each tick it takes; a tick waiting on the queue has none. A ``claimed`` or
``running`` tick whose owner is no longer running is the next pass's (or ``assay recover``'s) to
finish or run again. Ticks claimed before this migration have no owner: they read as queued.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("schedule_ticks") as batch:
        batch.add_column(sa.Column("owner", sa.String(200)))


def downgrade() -> None:
    with op.batch_alter_table("schedule_ticks") as batch:
        batch.drop_column("owner")
