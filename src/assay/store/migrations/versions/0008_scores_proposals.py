"""Scores kept per day, certification badges and their history, check proposals and their
trail, and the reads of a dataset that assay sees (its importance).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from assay.store.schema import UTCDateTime

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "scores",
        sa.Column("subject", sa.String(10), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("day", sa.Date, nullable=False),
        sa.Column("score", sa.Double, nullable=False),
        sa.Column("gate", sa.Double),
        sa.Column("below_gate", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("detail", sa.JSON(none_as_null=True)),
        sa.Column("recorded_at", UTCDateTime, nullable=False),
        sa.PrimaryKeyConstraint("subject", "name", "day", name="pk_scores"),
    )
    op.create_table(
        "certifications",
        sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("badge", sa.String(20), nullable=False),
        sa.Column("at", UTCDateTime, nullable=False),
        sa.Column("recorded_at", UTCDateTime, nullable=False),
        sa.Column("by", sa.String(200)),
        sa.Column("reason", sa.Text),
        sa.Column("criteria", sa.JSON(none_as_null=True)),
        sa.PrimaryKeyConstraint("dataset_id", "seq", name="pk_certifications"),
    )
    op.create_table(
        "proposals",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), nullable=False),
        sa.Column("kind", sa.String(30), nullable=False),
        sa.Column("target", sa.Text, nullable=False),
        sa.Column("evidence_hash", sa.String(64), nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("expectation", sa.JSON, nullable=False),
        sa.Column("evidence", sa.JSON, nullable=False),
        sa.Column("backtest", sa.JSON(none_as_null=True)),
        sa.Column("dry_run", sa.JSON(none_as_null=True)),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("decided_at", UTCDateTime),
        sa.Column("decided_by", sa.String(200)),
        sa.Column("why", sa.Text),
        sa.Column("document", sa.Text),
    )
    op.create_index("ix_proposals_dataset_id_state", "proposals", ["dataset_id", "state"])
    op.create_table(
        "proposal_events",
        sa.Column("proposal_id", sa.String(36), sa.ForeignKey("proposals.id"), nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("at", UTCDateTime, nullable=False),
        sa.Column("by", sa.String(200)),
        sa.Column("detail", sa.JSON(none_as_null=True)),
        sa.PrimaryKeyConstraint("proposal_id", "seq", name="pk_proposal_events"),
    )
    op.create_table(
        "reads",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("by", sa.String(200)),
        sa.Column("at", UTCDateTime, nullable=False),
        sa.Column("detail", sa.JSON(none_as_null=True)),
    )
    op.create_index("ix_reads_dataset_id_at", "reads", ["dataset_id", "at"])


def downgrade() -> None:
    op.drop_index("ix_reads_dataset_id_at", table_name="reads")
    op.drop_table("reads")
    op.drop_table("proposal_events")
    op.drop_index("ix_proposals_dataset_id_state", table_name="proposals")
    op.drop_table("proposals")
    op.drop_table("certifications")
    op.drop_table("scores")
