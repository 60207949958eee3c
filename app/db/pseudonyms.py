"""The workspaces' pseudonym books, in the database (issue 26: nodes share nothing but it and the store).

A book (app/agent/policy/privacy.py) was a file beside the workspace's data under one machine's file
lock: two nodes numbering new names at the same moment could give two people one pseudonym, and each
would unmask it as its own. Here a book is a `pseudonym_books` row (its hash key and personal kinds)
and one `pseudonyms` row per entry; every write holds the book's row lock:

- the write's first statement raises the row's `version`: on PostgreSQL that locks the row until the
  transaction ends; on SQLite it takes the database's one write lock (before anything is read, so no
  read snapshot goes stale under it). The writer then reads the newest book, changes it, and inserts
  the new entries; a second writer waits and then sees them.
- a book not made yet: its row is inserted; a second writer inserting too waits on the primary key
  until the first commits, fails, and starts again on the row the first made.

Entries are only ever added (a pseudonym, once in text, keeps its value). A workspace's book file
written before the move is read in the first time its book is written.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.config import Settings
from app.db.models import Pseudonym, PseudonymBookRow, utcnow
from app.db.session import rows_changed

log = logging.getLogger(__name__)

SavedBook = dict[str, Any]  # as privacy.py's: {"key": str, "kinds": [str], "values": {pseudonym: real}}
LEGACY_FILE = "pseudonyms.json"  # privacy.py BOOK_FILE: where a workspace kept its book before
ATTEMPTS = 5  # writers that lose the race to make a book start again; a few times is plenty


@dataclass
class DatabaseBook:
    """One workspace's book in the database (privacy.py's BookShelf)."""

    engine: Engine
    workspace_id: str
    legacy_file: Path | None = None  # the book file the workspace kept before the move, if any

    def read(self) -> SavedBook | None:
        with Session(self.engine) as session:
            return self._read(session)

    def _read(self, session: Session) -> SavedBook | None:
        row = session.get(PseudonymBookRow, self.workspace_id)
        if row is None:
            return None
        entries = session.execute(
            select(Pseudonym.pseudonym, Pseudonym.real_value).where(Pseudonym.workspace_id == self.workspace_id)
        )
        return {"key": row.hash_key, "kinds": list(row.kinds or []), "values": dict(entries.tuples().all())}

    def update(self, change: Callable[[SavedBook | None], SavedBook]) -> SavedBook:
        for attempt in range(ATTEMPTS):
            try:
                return self._update(change)
            except IntegrityError:  # another writer made the book this moment: write into its book
                if attempt == ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")

    def _update(self, change: Callable[[SavedBook | None], SavedBook]) -> SavedBook:
        with Session(self.engine) as session, session.begin():
            locked = rows_changed(
                session,
                update(PseudonymBookRow)
                .where(PseudonymBookRow.workspace_id == self.workspace_id)
                .values(version=PseudonymBookRow.version + 1, updated_at=utcnow()),
            )
            saved = self._read(session) if locked else self._legacy()
            body = change(saved)
            if not locked:  # the book's first write: its row (a second maker waits here, then fails)
                session.add(
                    PseudonymBookRow(
                        workspace_id=self.workspace_id, hash_key=body["key"], kinds=sorted(body["kinds"]), version=1
                    )
                )
                session.flush()
                known: dict[str, str] = {}
            else:
                assert saved is not None
                known = saved["values"]
                if sorted(body["kinds"]) != sorted(saved["kinds"]) or body["key"] != saved["key"]:
                    session.execute(
                        update(PseudonymBookRow)
                        .where(PseudonymBookRow.workspace_id == self.workspace_id)
                        .values(kinds=sorted(body["kinds"]), hash_key=body["key"])
                    )
            added = [
                {"workspace_id": self.workspace_id, "pseudonym": pseudonym, "real_value": real}
                for pseudonym, real in body["values"].items()
                if pseudonym not in known
            ]
            if added:
                session.execute(insert(Pseudonym), added)
            return body

    def _legacy(self) -> SavedBook | None:
        """The book file of this workspace written before books moved into the database (read once: the
        first write puts its entries in the database). Its format is privacy.py's FileShelf's."""
        if self.legacy_file is None or not self.legacy_file.is_file():
            return None
        try:
            saved = json.loads(self.legacy_file.read_text(encoding="utf-8"))
            book = {"key": str(saved["key"]), "kinds": list(saved.get("kinds") or []), "values": dict(saved["values"])}
        except (OSError, ValueError, KeyError, TypeError):
            log.warning("the old pseudonym book %s cannot be read; the workspace starts a new one", self.legacy_file)
            return None
        log.info("pseudonym book of workspace %s moved from %s into the database", self.workspace_id, self.legacy_file)
        return book


def workspace_book(bind: Engine | Session, settings: Settings, workspace_id: str) -> DatabaseBook:
    """The book of a workspace, read and written through `bind`'s engine (a session's own transaction is
    not used: a write holds the book's lock only for its own short transaction)."""
    engine = bind if isinstance(bind, Engine) else bind.get_bind()
    if not isinstance(engine, Engine):
        engine = engine.engine
    return DatabaseBook(engine, workspace_id, settings.workspace_dir(workspace_id) / LEGACY_FILE)
