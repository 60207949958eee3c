"""read-only report links

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30 10:55:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "report_shares",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("run_id", sa.String(length=32), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("views", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["runs.id"],
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_hash"),
    )
    op.create_index(op.f("ix_report_shares_run_id"), "report_shares", ["run_id"], unique=False)
    op.create_index(op.f("ix_report_shares_workspace_id"), "report_shares", ["workspace_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_report_shares_workspace_id"), table_name="report_shares")
    op.drop_index(op.f("ix_report_shares_run_id"), table_name="report_shares")
    op.drop_table("report_shares")
