"""files by store key: the paths of one machine in the database become object-store keys

Every kept file is now named by its key, its path relative to the data folder
(`workspaces/<id>/files/<id>/sales.xlsx`), which the object store and every node's cache share
(app/storage). Rows written before held the path the server saw, absolute or relative to its
working directory; each becomes the key found inside it. A value that names no kept file stays as it
was (nothing is guessed). The downgrade leaves keys: a key relative to the data folder is what the
older code reads when it runs in the data folder's parent, and nothing older can be rebuilt.

Revision ID: 0007_store_keys
Revises: 0006
Create Date: 2026-12-06 10:30:00
"""

import json
import re
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0007_store_keys"
down_revision = "0006"
branch_labels = None
depends_on = None

# The same rule as app.storage.files.key_from_legacy_path, repeated so this migration keeps working
# whatever the app's code becomes later.
_LEGACY = re.compile(r"(?:^|/)(workspaces/[\w-]{1,32}/.+)$")


def key_of(value: Any) -> Any:
    if not isinstance(value, str) or not value:
        return value
    found = _LEGACY.search(value.replace("\\", "/"))
    return found.group(1) if found else value


def keyed_figures(figures: Any) -> Any:
    if not isinstance(figures, list):
        return figures
    return [{**f, "path": key_of(f.get("path"))} if isinstance(f, dict) else f for f in figures]


def _loaded(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def upgrade() -> None:
    connection = op.get_bind()
    datasets = sa.table("datasets", sa.column("id"), sa.column("original_path"), sa.column("working_path"))
    for row in connection.execute(sa.select(datasets.c.id, datasets.c.original_path, datasets.c.working_path)):
        original, working = key_of(row.original_path), key_of(row.working_path)
        if (original, working) != (row.original_path, row.working_path):
            connection.execute(
                datasets.update().where(datasets.c.id == row.id).values(original_path=original, working_path=working)
            )
    calls = sa.table("tool_calls", sa.column("run_id"), sa.column("id"), sa.column("figures", sa.JSON))
    for call in connection.execute(sa.select(calls.c.run_id, calls.c.id, calls.c.figures)):
        figures = _loaded(call.figures)
        keyed = keyed_figures(figures)
        if keyed != figures:
            connection.execute(
                calls.update().where(calls.c.run_id == call.run_id, calls.c.id == call.id).values(figures=keyed)
            )
    reports = sa.table("reports", sa.column("id"), sa.column("content", sa.JSON))
    for report in connection.execute(sa.select(reports.c.id, reports.c.content)):
        content = _loaded(report.content)
        if not isinstance(content, dict) or not content.get("figures"):
            continue
        keyed = keyed_figures(content["figures"])
        if keyed != content["figures"]:
            connection.execute(
                reports.update().where(reports.c.id == report.id).values(content={**content, "figures": keyed})
            )


def downgrade() -> None:
    pass
