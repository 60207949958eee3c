"""pseudonym_books, pseudonyms: the workspaces' pseudonym books move from a file beside the data (locked
by one machine's file lock) into the database, whose lock every node shares (issue 26)

A workspace's book file (pseudonyms.json) is read into these tables the first time the book is written
after this migration (app/db/pseudonyms.py): the migration does not know the data folder.

Revision ID: 0010_pseudonym_books
Revises: 0009_store_marker
Create Date: 2026-12-06 14:40:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0010_pseudonym_books"
down_revision = "0009_store_marker"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "pseudonym_books",
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("hash_key", sa.String(length=64), nullable=False),
        sa.Column("kinds", sa.JSON(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("workspace_id"),
    )
    op.create_table(
        "pseudonyms",
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("pseudonym", sa.Text(), nullable=False),
        sa.Column("real_value", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["workspace_id"], ["pseudonym_books.workspace_id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("workspace_id", "pseudonym"),
    )


def downgrade() -> None:
    op.drop_table("pseudonyms")
    op.drop_table("pseudonym_books")
