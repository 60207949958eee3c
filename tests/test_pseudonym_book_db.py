"""Issue 26: the workspaces' pseudonym books live in the database (app/db/pseudonyms.py), locked there, so
runs on different nodes never give two people one pseudonym. Separate processes (each its own
engine, as nodes have) number new names at the same moment, on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy import func, select

from app.agent import PiiMasker, masked, unmasked
from app.config import Settings
from app.db.models import Pseudonym, PseudonymBookRow, Workspace
from app.db.pseudonyms import workspace_book
from app.db.session import open_database
from app.workspaces import create_workspace, delete_workspace


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path: Path) -> str:
    if request.param == "postgresql":
        return str(request.getfixturevalue("postgres_url"))
    return f"sqlite:///{tmp_path / 'shared.db'}"


def node(data_dir: Path, database_url: str) -> Settings:
    return Settings(_env_file=None, data_dir=data_dir, llm_model="builtin", database_url=database_url)


def new_workspace(settings: Settings) -> str:
    db = open_database(settings)
    with db.session() as session:
        workspace_id = create_workspace(session, "people").id
    db.close()
    return workspace_id


def _number_names(data_dir: str, database_url: str, workspace_id: str, start: int) -> dict[str, str]:
    """One node's run (its own process, data folder and engine) meeting 40 new names and an e-mail."""
    settings = node(Path(data_dir), database_url)
    db = open_database(settings)
    try:
        names = pd.DataFrame({"姓名": [f"学生{start + i}" for i in range(40)]})
        book = workspace_book(db.engine, settings, workspace_id)
        masker = PiiMasker.from_frames({"s": {"姓名": "name"}}, {"s": names}, book)
        given = {real: masker.mask(real) for real in names["姓名"]}
        given["shared@example.com"] = masker.mask("shared@example.com")  # found by pattern: saved after numbering
        return given
    finally:
        db.close()


def test_runs_on_eight_nodes_numbering_new_names_at_once_never_share_a_pseudonym(tmp_path, database_url):
    workspace_id = new_workspace(node(tmp_path / "node0", database_url))
    jobs = [(str(tmp_path / f"node{k}"), database_url, workspace_id, 1000 * k) for k in range(8)]
    with multiprocessing.get_context("spawn").Pool(8) as pool:
        given = pool.starmap(_number_names, jobs)
    used = {real: pseudonym for run in given for real, pseudonym in run.items() if real != "shared@example.com"}
    assert len(used) == 320 and len(set(used.values())) == 320  # one name, one pseudonym
    assert sorted(int(p.rpartition("_")[2]) for p in used.values()) == list(range(1, 321))  # no number skipped
    # every node hashed the e-mail with the book's one key: one pseudonym for it
    assert len({run["shared@example.com"] for run in given}) == 1
    settings = node(tmp_path / "elsewhere", database_url)  # a ninth node reads the book back
    db = open_database(settings)
    try:
        book = workspace_book(db.engine, settings, workspace_id)
        reader = PiiMasker.from_book(book)
        assert all(reader.unmask(pseudonym) == real for real, pseudonym in used.items())
        assert unmasked({"answer": given[0]["shared@example.com"]}, book) == {"answer": "shared@example.com"}
        with db.session() as session:
            assert session.scalar(select(func.count()).select_from(Pseudonym)) == 321
            row = session.get(PseudonymBookRow, workspace_id)
            assert row is not None and row.kinds == ["name"] and row.version >= 8
    finally:
        db.close()


def test_a_book_file_written_before_the_move_is_read_in_once(tmp_path, database_url):
    settings = node(tmp_path / "node", database_url)
    workspace_id = new_workspace(settings)
    legacy = settings.workspace_dir(workspace_id) / "pseudonyms.json"
    legacy.parent.mkdir(parents=True, exist_ok=True)
    legacy.write_text(
        json.dumps({"key": "ab" * 16, "kinds": ["name"], "values": {"姓名_001": "彭小明", "姓名_002": "王小红"}}),
        encoding="utf-8",
    )
    db = open_database(settings)
    try:
        book = workspace_book(db.engine, settings, workspace_id)
        assert book.read() is None  # nothing in the database until the book is first written
        names = pd.DataFrame({"姓名": ["王小红", "李四"]})
        masker = PiiMasker.from_frames({"s": {"姓名": "name"}}, {"s": names}, book)
        assert masker.mask("王小红, 李四, 彭小明") == "姓名_002, 姓名_003, 姓名_001"  # the old numbers kept
        saved = book.read()
        assert saved is not None and saved["key"] == "ab" * 16
        assert saved["values"] == {"姓名_001": "彭小明", "姓名_002": "王小红", "姓名_003": "李四"}
        legacy.unlink()  # from now on the database alone holds it
        assert masked("彭小明", book) == "姓名_001"
    finally:
        db.close()


def test_deleting_a_workspace_deletes_its_book(tmp_path, database_url):
    settings = node(tmp_path / "node", database_url)
    workspace_id = new_workspace(settings)
    db = open_database(settings)
    try:
        book = workspace_book(db.engine, settings, workspace_id)
        PiiMasker.from_frames({"s": {"姓名": "name"}}, {"s": pd.DataFrame({"姓名": ["彭小明"]})}, book)
        assert book.read() is not None
        with db.session() as session:
            workspace = session.get(Workspace, workspace_id)
            assert workspace is not None
            delete_workspace(session, settings, workspace)
        assert book.read() is None
        with db.session() as session:
            assert session.scalar(select(func.count()).select_from(Pseudonym)) == 0
    finally:
        db.close()
