"""Loads get a status, so that history reads only the loads that stand.

A load is ``current`` when made; the gate marks a contributor-month it refused as ``rejected``
and a month replaced by a corrected resend (or a profile loaded again for its date) as
``superseded``. Dynamic rules and drift windows read current loads only.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("loads") as batch:
        batch.add_column(sa.Column("status", sa.String(20), nullable=False, server_default="current"))
    op.create_index(
        "ix_loads_dataset_id_partition_logical_date", "loads", ["dataset_id", "partition", "logical_date"]
    )


def downgrade() -> None:
    op.drop_index("ix_loads_dataset_id_partition_logical_date", table_name="loads")
    with op.batch_alter_table("loads") as batch:
        batch.drop_column("status")
