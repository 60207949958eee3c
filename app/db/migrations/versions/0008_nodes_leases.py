"""leases: work a node has taken on, claimed in the database with an expiry (issue 26 point 4)

Revision ID: 0008_nodes_leases
Revises: 0007_store_keys
Create Date: 2026-12-06 10:30:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0008_nodes_leases"
down_revision = "0007_store_keys"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "leases",
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("holder", sa.String(length=64), nullable=False),
        sa.Column("holder_name", sa.String(length=300), nullable=False),
        sa.Column("acquired_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False, server_default=""),
        sa.PrimaryKeyConstraint("key"),
    )
    op.create_index(op.f("ix_leases_holder"), "leases", ["holder"], unique=False)
    op.create_index(op.f("ix_leases_expires_at"), "leases", ["expires_at"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_leases_expires_at"), table_name="leases")
    op.drop_index(op.f("ix_leases_holder"), table_name="leases")
    op.drop_table("leases")
