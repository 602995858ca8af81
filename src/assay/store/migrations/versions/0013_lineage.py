"""The lineage graph's edges and the layers of an incident that spans connected datasets.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from assay.store.schema import UTCDateTime

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "lineage_edges",
        sa.Column("upstream", sa.String(200), nullable=False),
        sa.Column("downstream", sa.String(200), nullable=False),
        sa.Column("origin", sa.String(20), nullable=False),
        sa.Column("job", sa.String(400), nullable=False, server_default=""),
        sa.Column("seen_at", UTCDateTime, nullable=False),
        sa.PrimaryKeyConstraint("upstream", "downstream", "origin", "job"),
    )
    op.create_index("ix_lineage_edges_downstream", "lineage_edges", ["downstream"])
    op.create_table(
        "incident_layers",
        sa.Column("incident_id", sa.String(36), sa.ForeignKey("incidents.id"), nullable=False),
        sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), nullable=False),
        sa.Column("first_seen", UTCDateTime, nullable=False),
        sa.Column("last_seen", UTCDateTime, nullable=False),
        sa.Column("evaluated_at", UTCDateTime, nullable=False),
        sa.Column("passes", sa.Integer, nullable=False, server_default="0"),
        sa.Column("run_ids", sa.JSON, nullable=False),
        sa.PrimaryKeyConstraint("incident_id", "dataset_id"),
    )
    op.create_index("ix_incident_layers_dataset_id", "incident_layers", ["dataset_id"])


def downgrade() -> None:
    op.drop_table("incident_layers")
    op.drop_table("lineage_edges")
