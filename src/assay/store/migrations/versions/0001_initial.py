"""The metric store's first schema: datasets, loads, metrics, runs and outcomes.

Revision ID: 0001
Revises:
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "datasets",
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("owner", sa.String(200)),
        sa.Column("description", sa.Text),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_datasets"),
        sa.UniqueConstraint("name", name="uq_datasets_name"),
    )
    op.create_table(
        "loads",
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("dataset_id", sa.Integer, nullable=False),
        sa.Column("partition", sa.String(200), nullable=False, server_default=""),
        sa.Column("logical_time", sa.DateTime(timezone=True), nullable=False),
        sa.Column("logical_date", sa.Date),
        sa.Column("source_path", sa.Text),
        sa.Column("source_sha256", sa.String(64)),
        sa.Column("row_count", sa.BigInteger),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_loads"),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], name="fk_loads_dataset_id_datasets"),
    )
    op.create_index(
        "ix_loads_dataset_id_partition_logical_time", "loads", ["dataset_id", "partition", "logical_time"]
    )
    op.create_table(
        "metrics",
        sa.Column("load_id", sa.Integer, nullable=False),
        sa.Column("entity", sa.String(20), nullable=False),
        sa.Column("instance", sa.Text, nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("value", sa.Double),
        sa.PrimaryKeyConstraint("load_id", "entity", "instance", "name", name="pk_metrics"),
        sa.ForeignKeyConstraint(["load_id"], ["loads.id"], name="fk_metrics_load_id_loads"),
    )
    op.create_index(
        "ix_metrics_entity_instance_name_load_id", "metrics", ["entity", "instance", "name", "load_id"]
    )
    op.create_table(
        "runs",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("dataset_id", sa.Integer),
        sa.Column("load_id", sa.Integer),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True)),
        sa.Column("summary", sa.JSON),
        sa.PrimaryKeyConstraint("id", name="pk_runs"),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], name="fk_runs_dataset_id_datasets"),
        sa.ForeignKeyConstraint(["load_id"], ["loads.id"], name="fk_runs_load_id_loads"),
    )
    op.create_index("ix_runs_dataset_id_started_at", "runs", ["dataset_id", "started_at"])
    op.create_table(
        "outcomes",
        sa.Column("run_id", sa.String(36), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("rule", sa.Text, nullable=False),
        sa.Column("outcome", sa.String(20), nullable=False),
        sa.Column("message", sa.Text),
        sa.Column("metrics", sa.JSON, nullable=False),
        sa.Column("labels", sa.JSON, nullable=False),
        sa.PrimaryKeyConstraint("run_id", "position", name="pk_outcomes"),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_outcomes_run_id_runs"),
    )


def downgrade() -> None:
    op.drop_table("outcomes")
    op.drop_index("ix_runs_dataset_id_started_at", table_name="runs")
    op.drop_table("runs")
    op.drop_index("ix_metrics_entity_instance_name_load_id", table_name="metrics")
    op.drop_table("metrics")
    op.drop_index("ix_loads_dataset_id_partition_logical_time", table_name="loads")
    op.drop_table("loads")
    op.drop_table("datasets")
