"""One run lifecycle: runs keep their inputs, counts, error and owner; loads belong to a run.

A load is now made ``pending`` by its run and settles (``current``, ``rejected`` or
``superseded``) when the run commits, so history never reads a load whose run failed or was
killed. Rule outcomes move from Glue's strings to assay's vocabulary (``passed``, ``failed``,
``config_error``, ...); Glue's strings stay in the DQDL JSON.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | None = None
depends_on: str | None = None

_OUTCOMES = {"Passed": "passed", "Failed": "failed", "Error": "config_error"}


def upgrade() -> None:
    with op.batch_alter_table("loads") as batch:
        batch.add_column(sa.Column("run_id", sa.String(36)))
    op.create_index("ix_loads_run_id", "loads", ["run_id"])
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("inputs", sa.JSON(none_as_null=True)))
        batch.add_column(sa.Column("counts", sa.JSON(none_as_null=True)))
        batch.add_column(sa.Column("error", sa.Text))
        batch.add_column(sa.Column("owner", sa.String(200)))
    op.create_index("ix_runs_state", "runs", ["state"])
    outcomes = sa.table("outcomes", sa.column("outcome", sa.String))
    for old, new in _OUTCOMES.items():
        op.execute(sa.update(outcomes).where(outcomes.c.outcome == old).values(outcome=new))


def downgrade() -> None:
    outcomes = sa.table("outcomes", sa.column("outcome", sa.String))
    for old, new in _OUTCOMES.items():
        op.execute(sa.update(outcomes).where(outcomes.c.outcome == new).values(outcome=old))
    op.drop_index("ix_runs_state", table_name="runs")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("owner")
        batch.drop_column("error")
        batch.drop_column("counts")
        batch.drop_column("inputs")
    op.drop_index("ix_loads_run_id", table_name="loads")
    with op.batch_alter_table("loads") as batch:
        batch.drop_column("run_id")
