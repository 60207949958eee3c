"""Where Verity's own files are: the checkout, and the pages' templates and static files.

Kept free of third-party imports: `verity --help` and the evaluation's argument defaults read it
without loading pydantic (app/config.py re-exports REPO_ROOT).
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parent


def asset_dir(name: str) -> Path:
    """`templates` or `static`: inside the package in an installed wheel (pyproject.toml maps the
    checkout's top-level folders there at build time), else the checkout's top-level folder
    (a source checkout or an editable install)."""
    packaged = PACKAGE_DIR / name
    return packaged if packaged.is_dir() else REPO_ROOT / name
