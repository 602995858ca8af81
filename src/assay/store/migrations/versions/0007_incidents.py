"""Incidents, their events and the notification outbox; loads that baselines leave out; the
stages a check run passed.

A check run's outcomes, the incidents they open, escalate or resolve, and the notifications those
cause are written in one transaction (the outbox); a delivery pass sends the pending ones.
``loads.in_baseline`` is False for a load an incident's resolution left out of later baselines.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from assay.store.schema import UTCDateTime

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("loads") as batch:
        batch.add_column(sa.Column("in_baseline", sa.Boolean, nullable=False, server_default=sa.true()))
    op.create_table(
        "incidents",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), nullable=False),
        sa.Column("dimension", sa.String(20), nullable=False),
        sa.Column("expectation", sa.String(200), nullable=False),
        sa.Column("group_key", sa.Text, nullable=False, server_default=""),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("severity", sa.String(20), nullable=False),
        sa.Column("owner", sa.String(200)),
        sa.Column("opened_at", UTCDateTime, nullable=False),
        sa.Column("evaluated_at", UTCDateTime, nullable=False),
        sa.Column("resolved_at", UTCDateTime),
        sa.Column("muted_until", UTCDateTime),
        sa.Column("passes", sa.Integer, nullable=False, server_default="0"),
        sa.Column("failures", sa.Integer, nullable=False, server_default="0"),
        sa.Column("observed", sa.Double),
        sa.Column("notified_observed", sa.Double),
        sa.Column("expected", sa.JSON(none_as_null=True)),
        sa.Column("message", sa.Text),
        sa.Column("cause", sa.String(20)),
        sa.Column("channels", sa.JSON(none_as_null=True)),
        sa.Column("updated_at", UTCDateTime, nullable=False),
    )
    op.create_index("ix_incidents_dataset_id_state", "incidents", ["dataset_id", "state"])
    op.create_index(
        "uq_incidents_unresolved",
        "incidents",
        ["dataset_id", "dimension", "expectation", "group_key"],
        unique=True,
        sqlite_where=sa.text("state != 'resolved'"),
        postgresql_where=sa.text("state != 'resolved'"),
    )
    op.create_table(
        "incident_events",
        sa.Column("incident_id", sa.String(36), sa.ForeignKey("incidents.id"), nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("at", UTCDateTime, nullable=False),
        sa.Column("recorded_at", UTCDateTime, nullable=False),
        sa.Column("run_id", sa.String(36)),
        sa.Column("by", sa.String(200)),
        sa.Column("detail", sa.JSON(none_as_null=True)),
        sa.PrimaryKeyConstraint("incident_id", "seq", name="pk_incident_events"),
    )
    op.create_table(
        "notifications",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("channel", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(30), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("payload", sa.JSON, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("next_attempt_at", UTCDateTime, nullable=False),
        sa.Column("lease_until", UTCDateTime),
        sa.Column("sent_at", UTCDateTime),
        sa.Column("error", sa.Text),
        sa.Column("dedupe_key", sa.Text),
        sa.Column("digest_day", sa.Date),
        sa.Column("digest_id", sa.String(36)),
        sa.Column("run_id", sa.String(36)),
        sa.Column("incident_id", sa.String(36)),
        sa.PrimaryKeyConstraint("id", "channel", name="pk_notifications"),
    )
    op.create_index("ix_notifications_status_next_attempt_at", "notifications", ["status", "next_attempt_at"])
    op.create_index("ix_notifications_dedupe_key", "notifications", ["dedupe_key"])
    op.create_table(
        "run_stages",
        sa.Column("run_id", sa.String(36), nullable=False),
        sa.Column("stage", sa.String(20), nullable=False),
        sa.Column("at", UTCDateTime, nullable=False),
        sa.Column("detail", sa.JSON(none_as_null=True)),
        sa.PrimaryKeyConstraint("run_id", "stage", name="pk_run_stages"),
    )


def downgrade() -> None:
    op.drop_table("run_stages")
    op.drop_table("notifications")
    op.drop_table("incident_events")
    op.drop_index("uq_incidents_unresolved", table_name="incidents")
    op.drop_table("incidents")
    with op.batch_alter_table("loads") as batch:
        batch.drop_column("in_baseline")
