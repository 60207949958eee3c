"""Personal data never reaches the model (SPEC §7): tools compute on the real values locally,
and everything they return is masked before it enters the conversation.

Masking can be undone for the user: each personal value becomes a stable pseudonym (`姓名_017`
for the 17th name of the column 姓名, `email_3fa2b1` for an e-mail address found anywhere), so the
model can still tell people apart, rank them and call tools about one of them. The pseudonyms are
kept in the workspace's pseudonym book (in the database, app/db/pseudonyms.py; never sent anywhere):
the same value gets the same pseudonym in every run of the workspace, a tool call that names a
pseudonym runs on the real value (`unmask`), and the answer and the reports the owner reads show
the real values again. Traces, stored reports (which share links serve) and model requests keep
the pseudonyms.

Two nets: the distinct values of the columns ingestion marked as personal are replaced wherever
they occur, and text that *looks* like a phone number, e-mail, ID-card or bank-card number is
replaced whatever column it came from.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import logging
import os
import re
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from app.ingest.pii import id_card_valid

log = logging.getLogger(__name__)

# Digit patterns also match big totals in tool output (15234567890 could be revenue), so the
# phone and bank-card nets are cast only in workspaces that hold such columns, and ID numbers
# must pass their checksum.
#
# Every net is linear in the text (a request or a tool's output of any length cannot hold the
# GIL for long): the e-mail net anchors on the "@" (below), and the digit nets try a bounded
# number of digits at each place.
_PATTERNS = {
    "email": re.compile(r"[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+"),  # what an e-mail is; found by `email_spans`
    "id_card": re.compile(r"(?<![\d.])\d{17}[\dXx](?![\d.])"),
    "bank_card": re.compile(r"(?<![\d.])\d{16,19}(?![\d.])"),
    "phone": re.compile(r"(?<![\d.])1[3-9]\d{9}(?![\d.])"),
}
ALWAYS = ("email", "id_card")
MAX_EXACT_VALUES = 20_000  # beyond this, a column's values are masked by pattern only
# A value longer than this is masked by pattern only too: the exact net tries, at each place of the
# text, at most this many characters, so masking stays linear whatever the values (personal values
# -- names, numbers, addresses -- are far shorter).
MAX_EXACT_CHARS = 128
TRIE_FANOUT = 8  # alternatives tried one by one at a branch of the exact net's trie, at most
# The e-mail net in two linear parts: an "@" after a local-part character, then its domain (which
# holds no "@", so two domains never overlap); the local part is read leftwards on the reversed text.
_EMAIL_AT = re.compile(r"(?<=[\w.+\-])@[\w\-]+(?:\.[\w\-]+)+")
_LOCAL_PART = re.compile(r"[\w.+\-]*")
# Kinds whose values carry no order or meaning worth numbering get a keyed hash of the value
# (`phone_3fa2b1`): stable without a counter, and unreadable without the workspace's key.
HASHED_KINDS = frozenset(_PATTERNS)
BOOK_FILE = "pseudonyms.json"
HEX = 6  # hex digits of a hashed pseudonym (longer only on a collision)


def email_spans(text: str) -> Iterator[tuple[int, int]]:
    """Where `_PATTERNS["email"]` matches in `text`, as `re.finditer` would find them, in linear
    time (that pattern, searched, tries every start of a long run of letters: quadratic). A match
    starts where the run of local-part characters before its "@" starts, or where the last match
    ended, whichever is later."""
    reversed_text = text[::-1]
    last_end = 0
    for at in _EMAIL_AT.finditer(text):
        local = _LOCAL_PART.match(reversed_text, len(text) - at.start())
        start = max(at.start() - (local.end() - local.start()) if local else at.start(), last_end)
        if start < at.start():
            yield start, at.end()
            last_end = at.end()


def substitute_spans(text: str, spans: Iterator[tuple[int, int]], replace: Callable[[str], str]) -> str:
    """`text` with each of `spans` (in order, not overlapping) replaced by `replace` of its text."""
    parts, last = [], 0
    for start, end in spans:
        parts += [text[last:start], replace(text[start:end])]
        last = end
    return "".join([*parts, text[last:]]) if parts else text


def literal_trie_pattern(values: list[str]) -> str:
    """One pattern for a set of literals that matches, where any matches, the longest: a trie (a
    shared prefix is read once, and the alternatives at each branch start with distinct characters),
    so a place in the text costs at most the longest value's length in steps, never one step per
    value as a flat alternation does."""
    root: dict[str, Any] = {}
    for value in values:
        node = root
        for char in value:
            node = node.setdefault(char, {})
        node[""] = {}  # the end of a value

    def pattern(node: dict[str, Any]) -> str:
        branches = [(char, re.escape(char) + pattern(child)) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        body = branches[0][1] if len(branches) == 1 else alternation(branches)
        if "" in node:  # a value ends here: longer ones first (greedy), this one if none matches
            return f"(?:{body})?" if len(branches) > 1 or len(body) > 1 else f"{body}?"
        return body

    def alternation(branches: list[tuple[str, str]]) -> str:
        """The branches (sorted by their distinct first characters) as a search tree: sre tries
        alternatives one by one, so a wide branch is halved behind a one-step character-class
        test, and a place costs log(width) steps, not width."""
        if len(branches) <= TRIE_FANOUT:
            return f"(?:{'|'.join(body for _, body in branches)})"
        half = len(branches) // 2
        first_chars = "".join(re.escape(char) for char, _ in branches[:half])
        return f"(?:(?=[{first_chars}]){alternation(branches[:half])}|{alternation(branches[half:])})"

    return pattern(root)


def compile_literals(values: list[str]) -> re.Pattern[str]:
    """`literal_trie_pattern` compiled; values whose shared prefixes branch so deeply that sre's
    parser runs out of stack (only crafted ones do) fall back to the flat alternation, longest
    first: the same matches, each place costing a step per value."""
    try:
        return re.compile(literal_trie_pattern(values))
    except RecursionError:
        return re.compile("|".join(map(re.escape, sorted(values, key=len, reverse=True))))


@contextmanager
def book_lock(path: Path | None) -> Iterator[None]:
    """Hold a book file's lock (a lock file beside it): two runs that number new values at once would
    give two values the same pseudonym, and unmasking would show one the other's name. One machine's
    lock: the app keeps its books in the database (app/db/pseudonyms.py), whose lock every node shares."""
    if path is None:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def book_path(workspace_dir: Path) -> Path:
    """Where a workspace kept its pseudonym book before the database kept it (a book file)."""
    return workspace_dir / BOOK_FILE


SavedBook = dict[str, Any]  # {"key": str, "kinds": [str], "values": {pseudonym: real value}}


class BookShelf(Protocol):
    """Where a workspace's pseudonym book is kept: the database (app/db/pseudonyms.py, shared by every
    node), or a file (`FileShelf`)."""

    def read(self) -> SavedBook | None:
        """The saved book; None when there is none yet."""

    def update(self, change: Callable[[SavedBook | None], SavedBook]) -> SavedBook:
        """Under the book's lock (one writer at a time, across processes and nodes): `change` is given the
        newest saved book and returns the book to save; what was saved is returned. `change` may be called
        more than once (when another writer made the book first): it must build its result from its argument."""


@dataclass
class FileShelf:
    """A book in a file (`pseudonyms.json`), written atomically under one machine's file lock."""

    path: Path

    def read(self) -> SavedBook | None:
        try:
            saved = json.loads(self.path.read_text(encoding="utf-8"))
            return {"key": str(saved["key"]), "kinds": list(saved.get("kinds") or []), "values": dict(saved["values"])}
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def update(self, change: Callable[[SavedBook | None], SavedBook]) -> SavedBook:
        with book_lock(self.path):
            body = change(self.read())
            self.path.parent.mkdir(parents=True, exist_ok=True)
            partial = self.path.with_suffix(f".{os.getpid()}.tmp")
            partial.write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
            os.replace(partial, self.path)
            return body


BookPlace = BookShelf | Path  # a shelf; or a book file (`.json`) or the folder holding `pseudonyms.json`


def shelf_of(place: BookPlace | None) -> BookShelf | None:
    if isinstance(place, Path):
        return FileShelf(place if place.suffix == ".json" else book_path(place))
    return place


def pseudonym_prefix(column: str, kind: str) -> str:
    """The readable part of a column's pseudonyms: the column's name as one word."""
    return re.sub(r"\W+", "_", str(column)).strip("_") or kind


@dataclass
class PseudonymBook:
    """Real value <-> pseudonym, for one workspace; kept on its shelf when `shelf` is set."""

    shelf: BookShelf | None = None
    key: str = field(default_factory=lambda: secrets.token_hex(16))
    real_of: dict[str, str] = field(default_factory=dict)  # pseudonym -> real value
    kinds: set[str] = field(default_factory=set)  # the personal kinds the workspace holds
    pseudonym_of: dict[str, str] = field(init=False, default_factory=dict)
    numbers: dict[str, int] = field(init=False, default_factory=dict)  # prefix -> the last number given
    changed: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        for pseudonym, real in list(self.real_of.items()):
            self._note(real, pseudonym)

    def _note(self, real: str, pseudonym: str) -> None:
        self.real_of[pseudonym] = real
        self.pseudonym_of[real] = pseudonym
        prefix, _, number = pseudonym.rpartition("_")
        if number.isdigit():
            self.numbers[prefix] = max(self.numbers.get(prefix, 0), int(number))

    @classmethod
    def from_saved(cls, shelf: BookShelf | None, saved: SavedBook | None) -> PseudonymBook:
        """The book `saved` holds (a fresh one, with a new key, for None)."""
        if not saved:
            return cls(shelf)
        return cls(shelf, str(saved["key"]), dict(saved.get("values") or {}), set(saved.get("kinds") or []))

    @classmethod
    def load(cls, place: BookPlace | None) -> PseudonymBook:
        """The saved book (a fresh one, with a new key, when there is none)."""
        shelf = shelf_of(place)
        return cls.from_saved(shelf, shelf.read() if shelf is not None else None)

    def body(self) -> SavedBook:
        return {"key": self.key, "kinds": sorted(self.kinds), "values": dict(self.real_of)}

    def save(self) -> None:
        """Keep what this book added, merged with what other runs of the workspace (on any node) saved
        meanwhile, one writer at a time; this book then holds their values too."""
        if self.shelf is None or not self.changed:
            return
        saved = self.shelf.update(self._merged_into)
        self._adopt(saved)
        self.changed = False

    def _merged_into(self, saved: SavedBook | None) -> SavedBook:
        """The saved book with this book's own additions (a saved pseudonym keeps its value: it may
        already stand in text another run wrote)."""
        merged = PseudonymBook.from_saved(None, saved or self.body())
        for pseudonym, real in self.real_of.items():
            if pseudonym not in merged.real_of and real not in merged.pseudonym_of:
                merged._note(real, pseudonym)
        merged.kinds |= self.kinds
        return merged.body()

    def _adopt(self, saved: SavedBook) -> None:
        """Hold `saved` (the newest book, which includes this one's additions)."""
        self.key = str(saved["key"])
        self.kinds |= set(saved.get("kinds") or [])
        for pseudonym, real in dict(saved.get("values") or {}).items():
            if self.real_of.get(pseudonym) != real:
                self._note(real, pseudonym)

    def numbered(self, value: str, prefix: str) -> str:
        """The value's pseudonym, numbered in the order values are first seen under `prefix`."""
        if value in self.pseudonym_of:
            return self.pseudonym_of[value]
        return self._add(value, f"{prefix}_{self.numbers.get(prefix, 0) + 1:03d}")

    def hashed(self, value: str, kind: str) -> str:
        """The value's pseudonym, a keyed hash of it (`email_3fa2b1`)."""
        if value in self.pseudonym_of:
            return self.pseudonym_of[value]
        digest = hmac.new(self.key.encode(), value.encode(), hashlib.sha256).hexdigest()
        width = HEX
        while self.real_of.get(f"{kind}_{digest[:width]}", value) != value:  # a collision: widen
            width += 2
        return self._add(value, f"{kind}_{digest[:width]}")

    def _add(self, value: str, pseudonym: str) -> str:
        self._note(value, pseudonym)
        self.changed = True
        return pseudonym


@dataclass
class PiiMasker:
    book: PseudonymBook = field(default_factory=PseudonymBook)
    _exact: re.Pattern[str] | None = None
    _known: re.Pattern[str] | None = None

    @property
    def kinds(self) -> set[str]:
        return self.book.kinds

    @property
    def replacements(self) -> dict[str, str]:
        """Real value -> pseudonym, for every value the book knows."""
        return self.book.pseudonym_of

    @classmethod
    def from_frames(
        cls,
        pii_columns: dict[str, dict[str, str]],
        frames: dict[str, pd.DataFrame],
        book: PseudonymBook | BookPlace | None = None,
    ) -> PiiMasker:
        """`pii_columns`: dataset name -> {column: kind}, as ingestion detected them. Every value of
        those columns gets its pseudonym now (in the book, which is saved). `book` may be the
        workspace's shelf (or folder), whose book is read."""
        shelf = book.shelf if isinstance(book, PseudonymBook) else shelf_of(book)
        if shelf is None:  # a book of this masker alone
            alone = book if isinstance(book, PseudonymBook) else PseudonymBook()
            cls._number_values(alone, pii_columns, frames)
            return cls(alone)._compiled()
        numbered: list[PseudonymBook] = []

        def number(saved: SavedBook | None) -> SavedBook:
            # numbers are given under the book's lock, from the newest saved book: two runs (on any
            # nodes) never give one number twice
            fresh = PseudonymBook.from_saved(shelf, saved)
            cls._number_values(fresh, pii_columns, frames)
            numbered[:] = [fresh]
            return fresh.body()

        shelf.update(number)
        numbered[0].changed = False
        return cls(numbered[0])._compiled()

    @staticmethod
    def _number_values(
        book: PseudonymBook, pii_columns: dict[str, dict[str, str]], frames: dict[str, pd.DataFrame]
    ) -> None:
        """Give every value of the personal-data columns its pseudonym in `book`."""
        for name, columns in pii_columns.items():
            frame = frames.get(name)
            for column, kind in columns.items():
                if kind not in book.kinds:  # the phone and bank-card nets are cast from now on
                    book.kinds.add(kind)
                    book.changed = True
                if frame is None or column not in frame.columns:
                    continue
                values = frame[column].dropna().astype(str).str.strip().unique()
                if len(values) > MAX_EXACT_VALUES:
                    continue
                prefix = pseudonym_prefix(column, kind)
                for value in values:
                    if 2 <= len(value) <= MAX_EXACT_CHARS:
                        book.hashed(value, kind) if kind in HASHED_KINDS else book.numbered(value, prefix)

    @classmethod
    def from_book(cls, place: BookPlace | None) -> PiiMasker:
        """The workspace's masker from its saved book alone (no data read): for what is written
        after a run (the trace's answer, the stored report) and for the owner's downloads."""
        return cls(PseudonymBook.load(place))._compiled()

    def _compiled(self) -> PiiMasker:
        """Compile the net that finds the book's pseudonyms (the exact net waits for the first mask:
        unmasking, all a page needs, never pays for it)."""
        self._known = self._shape()
        self._exact = None
        return self

    def _exact_net(self) -> re.Pattern[str] | None:
        """The book's values, longest first, compiled once."""
        if self._exact is None and self.book.pseudonym_of:
            # values too long for the net (pattern-found ones may be) are left to the pattern nets
            values = [value for value in self.book.pseudonym_of if len(value) <= MAX_EXACT_CHARS]
            self._exact = compile_literals(values) if values else None
        return self._exact

    def _shape(self) -> re.Pattern[str] | None:
        """What the book's pseudonyms look like: one of a few prefixes, then a number or a hash (never
        read inside a longer one: 姓名_017 in 姓名_0171, email_3fa2b1 in email_3fa2b1c)."""
        prefixes = sorted({pseudonym.rpartition("_")[0] for pseudonym in self.book.real_of}, key=len, reverse=True)
        if not prefixes:
            return None
        return re.compile(f"(?:{'|'.join(map(re.escape, prefixes))})_[0-9a-f]{{3,}}(?![0-9a-f])")

    def _between_pseudonyms(self, text: str, exact: re.Pattern[str]) -> str:
        """The exact net cast on the text between pseudonyms, which stay as they are: a short real
        value inside one (a name "ma" in email_3fa2b1) must not break it when masked text is masked
        again."""

        def replaced(part: str) -> str:
            return exact.sub(lambda m: self.book.pseudonym_of[m.group(0)], part)

        if self._known is None:
            return replaced(text)
        parts, last = [], 0
        for found in self._known.finditer(text):
            parts += [replaced(text[last : found.start()]), found.group(0)]
            last = found.end()
        return "".join([*parts, replaced(text[last:])])

    def mask(self, text: str) -> str:
        """Replace every personal value in `text` by its pseudonym."""
        if not text:
            return text
        if (exact := self._exact_net()) is not None:
            text = self._between_pseudonyms(text, exact)
        known = len(self.book.real_of)
        for kind, pattern in _PATTERNS.items():
            if kind == "email":
                text = substitute_spans(text, email_spans(text), lambda value: self._mask_match(value, "email"))
            elif kind in ALWAYS or kind in self.kinds:
                text = pattern.sub(self._replacement(kind), text)
        if len(self.book.real_of) != known:  # values found by pattern: unmasked later, in this run or another
            self.book.save()
            self._known = self._shape()  # (the pattern net finds them again: the exact net stays)
        return text

    def unmask(self, text: str) -> str:
        """Put the real values back in place of the pseudonyms (for the user, and for tools)."""
        if not text or self._known is None:
            return text
        return self._known.sub(lambda m: self.book.real_of.get(m.group(0), m.group(0)), text)

    def _replacement(self, kind: str) -> Callable[[re.Match[str]], str]:
        """What a match of `kind` becomes (a function per kind binds the loop's kind)."""
        return lambda match: self._mask_match(match.group(0), kind)

    def _mask_match(self, value: str, kind: str) -> str:
        if kind == "id_card" and not id_card_valid(value):
            return value
        if value in self.book.real_of:  # already a pseudonym (an e-mail-like one cannot be, but be sure)
            return value
        return self.book.hashed(value, kind)


def map_strings(value: Any, change: Callable[[str], str]) -> Any:
    """`value` (JSON-like: dicts, lists, strings) with `change` applied to every string in it."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {key: map_strings(item, change) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [map_strings(item, change) for item in value]
    return value


def masked(value: Any, place: BookPlace) -> Any:
    """`value` (JSON-like) with the workspace's real values replaced by their pseudonyms: what is
    stored, traced and shared. `place`: the workspace's book (app/db/pseudonyms.py `workspace_book`)."""
    return map_strings(value, PiiMasker.from_book(place).mask)


def unmasked(value: Any, place: BookPlace) -> Any:
    """`value` (JSON-like) with the workspace's pseudonyms replaced by the real values: what its
    owner reads (the answer, the run panel, downloads) and what re-run code computes on."""
    shelf = shelf_of(place)
    saved = shelf.read() if shelf is not None else None
    if not saved or not saved.get("values"):
        return value
    return map_strings(value, PiiMasker(PseudonymBook.from_saved(shelf, saved))._compiled().unmask)
