"""Profiles: each load's schema and value counts, value sets, drift judgements and decisions.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "load_columns",
        sa.Column("load_id", sa.Integer, nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("type", sa.String(100), nullable=False),
        sa.PrimaryKeyConstraint("load_id", "position", name="pk_load_columns"),
        sa.ForeignKeyConstraint(["load_id"], ["loads.id"], name="fk_load_columns_load_id_loads"),
    )
    op.create_table(
        "load_values",
        sa.Column("load_id", sa.Integer, nullable=False),
        sa.Column("column", sa.Text, nullable=False),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("count", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("load_id", "column", "value", name="pk_load_values"),
        sa.ForeignKeyConstraint(["load_id"], ["loads.id"], name="fk_load_values_load_id_loads"),
    )
    op.create_table(
        "value_sets",
        sa.Column("dataset_id", sa.Integer, nullable=False),
        sa.Column("column", sa.Text, nullable=False),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("first_load_id", sa.Integer, nullable=False),
        sa.Column("last_load_id", sa.Integer, nullable=False),
        sa.Column("first_date", sa.Date),
        sa.Column("last_date", sa.Date),
        sa.PrimaryKeyConstraint("dataset_id", "column", "value", name="pk_value_sets"),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], name="fk_value_sets_dataset_id_datasets"),
        sa.ForeignKeyConstraint(["first_load_id"], ["loads.id"], name="fk_value_sets_first_load_id_loads"),
        sa.ForeignKeyConstraint(["last_load_id"], ["loads.id"], name="fk_value_sets_last_load_id_loads"),
    )
    op.create_table(
        "judgements",
        sa.Column("load_id", sa.Integer, nullable=False),
        sa.Column("column", sa.Text, nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("observed", sa.Double),
        sa.Column("low", sa.Double),
        sa.Column("high", sa.Double),
        sa.Column("severity", sa.String(10)),
        sa.Column("message", sa.Text),
        sa.Column("detail", sa.JSON),
        sa.PrimaryKeyConstraint("load_id", "column", "kind", name="pk_judgements"),
        sa.ForeignKeyConstraint(["load_id"], ["loads.id"], name="fk_judgements_load_id_loads"),
    )
    op.create_table(
        "decisions",
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("dataset_id", sa.Integer, nullable=False),
        sa.Column("column", sa.Text, nullable=False),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("first_load_id", sa.Integer),
        sa.Column("opened_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True)),
        sa.Column("decided_by", sa.String(200)),
        sa.Column("note", sa.Text),
        sa.PrimaryKeyConstraint("id", name="pk_decisions"),
        sa.UniqueConstraint("dataset_id", "column", "value", name="uq_decisions_dataset_id_column_value"),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], name="fk_decisions_dataset_id_datasets"),
        sa.ForeignKeyConstraint(["first_load_id"], ["loads.id"], name="fk_decisions_first_load_id_loads"),
    )
    op.create_table(
        "decision_sources",
        sa.Column("decision_id", sa.Integer, nullable=False),
        sa.Column("source", sa.String(200), nullable=False),
        sa.Column("rows", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("decision_id", "source", name="pk_decision_sources"),
        sa.ForeignKeyConstraint(
            ["decision_id"], ["decisions.id"], name="fk_decision_sources_decision_id_decisions"
        ),
    )


def downgrade() -> None:
    for table in ("decision_sources", "decisions", "judgements", "value_sets", "load_values", "load_columns"):
        op.drop_table(table)
