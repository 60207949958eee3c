"""sign-in and sign-up attempts counted in the database (shared by every server process)

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-06 04:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "auth_attempts",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("account", sa.String(length=320), nullable=False),
        sa.Column("client", sa.String(length=64), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_auth_attempts_account"), "auth_attempts", ["account"], unique=False)
    op.create_index(op.f("ix_auth_attempts_client"), "auth_attempts", ["client"], unique=False)
    op.create_index(op.f("ix_auth_attempts_at"), "auth_attempts", ["at"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_auth_attempts_at"), table_name="auth_attempts")
    op.drop_index(op.f("ix_auth_attempts_client"), table_name="auth_attempts")
    op.drop_index(op.f("ix_auth_attempts_account"), table_name="auth_attempts")
    op.drop_table("auth_attempts")
