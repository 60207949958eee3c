"""runs executed by worker processes: worker, heartbeat, stop request

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 10:20:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("worker", sa.String(length=200), nullable=True))
        batch.add_column(sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("stop_requested", sa.Boolean(), server_default=sa.false(), nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("stop_requested")
        batch.drop_column("heartbeat_at")
        batch.drop_column("worker")
