"""One clean history: ``baseline_marks`` say what of a load later baselines do not read.

A load whose metric raised a hard alert or failed an expectation is ``held`` out of every later
baseline (the monitor's bands, ``last(k)`` of check documents and of DQDL rules, proposals) until
a person accepts it (``accepted``) or keeps it out (``left_out``). ``loads.in_baseline`` (0007),
which only an incident's resolution set and only check documents read, becomes a ``left_out``
mark on the whole load and goes.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-05
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

from assay.store.schema import UTCDateTime

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | None = None
depends_on: str | None = None

_LOADS = sa.table("loads", sa.column("id", sa.Integer), sa.column("in_baseline", sa.Boolean))


def upgrade() -> None:
    marks = op.create_table(
        "baseline_marks",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("load_id", sa.Integer, sa.ForeignKey("loads.id"), nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("entity", sa.String(20), nullable=False),
        sa.Column("instance", sa.Text, nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("run_id", sa.String(36)),
        sa.Column("at", UTCDateTime, nullable=False),
        sa.Column("decided_by", sa.String(200)),
        sa.Column("decided_at", UTCDateTime),
        sa.Column("note", sa.Text),
    )
    op.create_index(op.f("ix_baseline_marks_load_id"), "baseline_marks", ["load_id"])
    connection = op.get_bind()
    out = [
        row[0] for row in connection.execute(sa.select(_LOADS.c.id).where(_LOADS.c.in_baseline.is_(False)))
    ]
    now = datetime.now(UTC)
    if out:
        op.bulk_insert(
            marks,
            [
                {
                    "load_id": load,
                    "kind": "incident",
                    "entity": "*",
                    "instance": "*",
                    "name": "*",
                    "state": "left_out",
                    "at": now,
                }
                for load in out
            ],
        )
    with op.batch_alter_table("loads") as batch:
        batch.drop_column("in_baseline")


def downgrade() -> None:
    with op.batch_alter_table("loads") as batch:
        batch.add_column(sa.Column("in_baseline", sa.Boolean, nullable=False, server_default=sa.true()))
    marks = sa.table(
        "baseline_marks",
        sa.column("load_id", sa.Integer),
        sa.column("entity", sa.String),
        sa.column("instance", sa.String),
        sa.column("name", sa.String),
        sa.column("state", sa.String),
    )
    whole = sa.select(marks.c.load_id).where(
        marks.c.state == "left_out", marks.c.entity == "*", marks.c.instance == "*", marks.c.name == "*"
    )
    op.execute(_LOADS.update().where(_LOADS.c.id.in_(whole)).values(in_baseline=False))
    op.drop_index(op.f("ix_baseline_marks_load_id"), table_name="baseline_marks")
    op.drop_table("baseline_marks")
