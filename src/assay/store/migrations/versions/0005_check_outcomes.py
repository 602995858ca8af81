"""Check documents: one outcome per expectation (and group) per run, with its owner and evidence.

A check run (``assay check run``) records its run in ``runs`` (kind ``check``) and its metrics as
loads of the dataset, one load per profile (the load's ``partition`` is the profile's id). Its
outcomes need more than a DQDL rule's (a group, a severity, a mode, an owner, the observed value
and the bounds it was judged against, a reason for a skip, the attempts, the evidence), and are
read back by expectation and group over time: they get a table of their own.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from assay.store.schema import UTCDateTime

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "check_outcomes",
        sa.Column(
            "run_id",
            sa.String(36),
            sa.ForeignKey("runs.id", name="fk_check_outcomes_run_id_runs"),
            nullable=False,
        ),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column(
            "dataset_id",
            sa.Integer,
            sa.ForeignKey("datasets.id", name="fk_check_outcomes_dataset_id_datasets"),
            nullable=False,
        ),
        sa.Column("at", UTCDateTime, nullable=False),
        sa.Column("expectation", sa.String(200), nullable=False),
        sa.Column("group_key", sa.Text, nullable=False, server_default=""),
        sa.Column("outcome", sa.String(20), nullable=False),
        sa.Column("severity", sa.String(20), nullable=False),
        sa.Column("mode", sa.String(20), nullable=False),
        sa.Column("owner", sa.String(200)),
        sa.Column("observed", sa.Double),
        sa.Column("expected", sa.JSON(none_as_null=True)),
        sa.Column("message", sa.Text),
        sa.Column("reason", sa.String(40)),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="1"),
        sa.Column("detail", sa.JSON(none_as_null=True)),
        sa.PrimaryKeyConstraint("run_id", "position", name="pk_check_outcomes"),
    )
    op.create_index(
        "ix_check_outcomes_dataset_id_expectation_at", "check_outcomes", ["dataset_id", "expectation", "at"]
    )


def downgrade() -> None:
    op.drop_index("ix_check_outcomes_dataset_id_expectation_at", table_name="check_outcomes")
    op.drop_table("check_outcomes")
