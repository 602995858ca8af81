"""Schedules: one row per tick of a profile's schedule that a scheduler started.

``assay run --due`` and ``assay scheduler`` claim the latest due tick of each scheduled profile by
inserting its row; the primary key (document, profile, tick) makes the claim exactly-once when
two schedulers see the same tick. The row then records the run it started and how it ended.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from assay.store.schema import UTCDateTime

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "schedule_ticks",
        sa.Column("document", sa.String(500), nullable=False),
        sa.Column("profile", sa.String(200), nullable=False),
        sa.Column("tick", UTCDateTime, nullable=False),
        sa.Column("logical_date", sa.Date, nullable=False),
        sa.Column("dataset", sa.String(200), nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("run_id", sa.String(36)),
        sa.Column("claimed_at", UTCDateTime, nullable=False),
        sa.Column("finished_at", UTCDateTime),
        sa.Column("message", sa.Text),
        sa.PrimaryKeyConstraint("document", "profile", "tick", name="pk_schedule_ticks"),
    )


def downgrade() -> None:
    op.drop_table("schedule_ticks")
