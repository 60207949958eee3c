"""store_marker: the object store this database was made with (issue 26 point 5, the start-up check)

Revision ID: 0009_store_marker
Revises: 0008_nodes_leases
Create Date: 2026-12-06 14:30:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0009_store_marker"
down_revision = "0008_nodes_leases"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # No row yet: the first node that starts after this migration writes the marker object and the row.
    op.create_table(
        "store_marker",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("store_id", sa.String(length=64), nullable=False),
        sa.Column("store_kind", sa.String(length=20), nullable=False),
        sa.Column("store_place", sa.Text(), nullable=False, server_default=""),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )


def downgrade() -> None:
    op.drop_table("store_marker")
