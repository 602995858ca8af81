"""The web control plane's people: users with a role and a hashed token, browser sessions,
one-time login codes, and the audit trail of every write made through the web or the API.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from assay.store.schema import UTCDateTime

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("created_by", sa.String(200)),
        sa.Column("disabled_at", UTCDateTime),
        sa.UniqueConstraint("name", name="uq_users_name"),
        sa.UniqueConstraint("token_hash", name="uq_users_token_hash"),
    )
    op.create_table(
        "web_sessions",
        sa.Column("id_hash", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("csrf", sa.String(64), nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("expires_at", UTCDateTime, nullable=False),
    )
    op.create_table(
        "login_codes",
        sa.Column("code_hash", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("expires_at", UTCDateTime, nullable=False),
        sa.Column("used_at", UTCDateTime),
    )
    op.create_table(
        "audit",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("at", UTCDateTime, nullable=False),
        sa.Column("by", sa.String(200), nullable=False),
        sa.Column("action", sa.String(40), nullable=False),
        sa.Column("target", sa.Text, nullable=False),
        sa.Column("dataset", sa.String(200)),
        sa.Column("detail", sa.JSON(none_as_null=True)),
    )
    op.create_index("ix_audit_at", "audit", ["at"])
    op.create_index("ix_audit_dataset_at", "audit", ["dataset", "at"])


def downgrade() -> None:
    op.drop_index("ix_audit_dataset_at", table_name="audit")
    op.drop_index("ix_audit_at", table_name="audit")
    op.drop_table("audit")
    op.drop_table("login_codes")
    op.drop_table("web_sessions")
    op.drop_table("users")
