"""The catalog's kept entries: each dataset's score and what the catalog filters and sorts on.

Every dataset a store already knows gets a ``stale`` entry: the first catalog read or ``assay
score`` after the upgrade computes it (a score needs the workspace's check documents, which a
migration cannot read), and no page ever shows a score that was not computed from its inputs.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from assay.store.schema import UTCDateTime

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | None = None
depends_on: str | None = None

_DATASETS = sa.table("datasets", sa.column("id", sa.Integer))


def upgrade() -> None:
    entries = op.create_table(
        "catalog_entries",
        sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), primary_key=True),
        sa.Column("stale", sa.Boolean, nullable=False),
        sa.Column("version", sa.Integer, nullable=False, server_default="0"),
        sa.Column("score", sa.Double),
        sa.Column("health", sa.Double),
        sa.Column("enrichment", sa.Double),
        sa.Column("importance", sa.Double),
        sa.Column("tier", sa.Integer),
        sa.Column("team", sa.String(200)),
        sa.Column("owner", sa.String(200)),
        sa.Column("description", sa.Text),
        sa.Column("schema_name", sa.String(200)),
        sa.Column("search", sa.Text),
        sa.Column("badge", sa.String(20)),
        sa.Column("open_incidents", sa.Integer, nullable=False, server_default="0"),
        sa.Column("last_run_at", UTCDateTime),
        sa.Column("loaded_at", UTCDateTime),
        sa.Column("document", sa.Text),
        sa.Column("computed_at", UTCDateTime),
    )
    op.create_index("ix_catalog_entries_stale", "catalog_entries", ["stale"])
    op.create_index("ix_catalog_entries_score", "catalog_entries", ["score"])
    op.create_index("ix_catalog_entries_team", "catalog_entries", ["team"])
    op.create_table(
        "catalog_tags",
        sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), nullable=False),
        sa.Column("tag", sa.String(200), nullable=False),
        sa.PrimaryKeyConstraint("dataset_id", "tag"),
    )
    op.create_index("ix_catalog_tags_tag", "catalog_tags", ["tag"])
    ids = [row[0] for row in op.get_bind().execute(sa.select(_DATASETS.c.id))]
    if ids:
        op.bulk_insert(entries, [{"dataset_id": i, "stale": True, "version": 0} for i in ids])


def downgrade() -> None:
    op.drop_table("catalog_tags")
    op.drop_table("catalog_entries")
