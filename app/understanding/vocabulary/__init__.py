"""The words the understanding reads questions with, kept as data (issue 22): one TOML file per
concern in this folder (README.md here: what each file holds, the entry format, how to add an
entry), read with the standard library's tomllib.

A file is read once, the first time a module asks for it, and kept; a file or an entry that is not
in the expected shape raises VocabularyError naming the file, the table and the entry. The modules
that use the words make their constants from them when they are imported, so reading a question
never touches a file. The harness's intent rules read their own file beside them
(app/agent/policy/intent_words.toml) through the same functions.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

FOLDER = Path(__file__).resolve().parent
# An item `{name}` of a pattern list stands for a pattern with real structure that the module keeps in code.
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


class VocabularyError(ValueError):
    """A vocabulary file that cannot be read, or an entry that is not in the expected shape."""


@dataclass(frozen=True)
class Entry:
    """One `[[table]]` entry of a file: its fields, and where it stands (for error messages)."""

    file: str
    table: str
    number: int  # 1 for the table's first entry in the file
    fields: Mapping[str, object]

    @property
    def place(self) -> str:
        key = self.fields.get("key")
        label = f" (key {key!r})" if isinstance(key, str) else ""
        return f"{self.file}: [[{self.table}]] entry {self.number}{label}"

    def error(self, message: str) -> VocabularyError:
        return VocabularyError(f"{self.place}: {message}")

    @property
    def why(self) -> str:
        return self.text("why")

    @property
    def key(self) -> str:
        return self.text("key")

    def text(self, name: str) -> str:
        value = self.fields.get(name)
        if not isinstance(value, str) or not value:
            raise self.error(f"`{name}` must be a non-empty string")
        return value

    def strings(self, name: str) -> tuple[str, ...]:
        value = self.fields.get(name)
        if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
            raise self.error(f"`{name}` must be a non-empty list of non-empty strings")
        return tuple(value)

    def pair(self, name: str) -> tuple[str, str]:
        """A [first, second] list: an English and a Chinese text, an earlier and a later marker."""
        value = self.fields.get(name)
        if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) and v for v in value)):
            raise self.error(f"`{name}` must be a [first, second] pair of non-empty strings")
        return value[0], value[1]

    def pairs(self, name: str) -> tuple[tuple[str, str], ...]:
        value = self.fields.get(name)
        if not isinstance(value, list) or not value:
            raise self.error(f"`{name}` must be a non-empty list of [first, second] pairs")
        pairs: list[tuple[str, str]] = []
        for pair in value:
            if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(v, str) and v for v in pair)):
                raise self.error(f"`{name}` must be a non-empty list of [first, second] pairs, not {pair!r}")
            pairs.append((pair[0], pair[1]))
        return tuple(pairs)

    def integer(self, name: str) -> int:
        value = self.fields.get(name)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.error(f"`{name}` must be a whole number")
        return value

    def patterns(self, name: str = "patterns", structures: Mapping[str, str] | None = None) -> tuple[str, ...]:
        """The entry's regular expressions; an item `{name}` is `structures[name]`."""
        found: list[str] = []
        for pattern in self.strings(name):
            if placeholder := _PLACEHOLDER.fullmatch(pattern):
                if structures is None or placeholder.group(1) not in structures:
                    given = ", ".join(structures or ()) or "none"
                    raise self.error(f"`{pattern}` names no pattern the code gives (it gives: {given})")
                found.append(structures[placeholder.group(1)])
            else:
                found.append(pattern)
        return tuple(found)

    def alternation(self, name: str = "patterns") -> str:
        """The entry's regular expressions as one: `a|b|c`."""
        return "|".join(self.patterns(name))

    def check(self, name: str = "patterns") -> None:
        """Raise, naming the entry, for an item of `name` that is not a regular expression on its own
        (a placeholder stands for the code's pattern and is not checked here)."""
        for pattern in self.strings(name):
            if _PLACEHOLDER.fullmatch(pattern):
                continue
            try:
                re.compile(pattern)
            except re.error as exc:
                raise self.error(f"{pattern!r} is not a regular expression: {exc}") from exc


def _path(file: str | Path) -> Path:
    """A name ("synonyms") is a file of this folder; a path is used as it is (the harness's own file)."""
    return FOLDER / f"{file}.toml" if isinstance(file, str) else file.resolve()


@cache
def _tables(path: Path) -> dict[str, tuple[Entry, ...]]:
    """The file's tables, each a tuple of its entries in file order; every entry says why it exists."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise VocabularyError(f"{path.name}: cannot be read: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise VocabularyError(f"{path.name}: not valid TOML: {exc}") from exc
    tables: dict[str, tuple[Entry, ...]] = {}
    for table, value in data.items():
        if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
            raise VocabularyError(f"{path.name}: `{table}` must be a list of [[{table}]] entries")
        entries = tuple(Entry(path.name, table, number, item) for number, item in enumerate(value, 1))
        for entry in entries:
            if len(entry.why.split()) < 2:  # a reason, not a placeholder
                raise entry.error("`why` must say in a few words why the entry exists")
        tables[table] = entries
    return tables


def entries(file: str | Path, table: str) -> tuple[Entry, ...]:
    """The `[[table]]` entries of a vocabulary file, in file order."""
    path = _path(file)
    tables = _tables(path)
    if table not in tables:
        raise VocabularyError(f"{path.name}: no [[{table}]] entries")
    return tables[table]


def words(file: str | Path, table: str, field: str = "words") -> tuple[str, ...]:
    """Every entry's `field` list, one after the other, in file order."""
    return tuple(word for entry in entries(file, table) for word in entry.strings(field))


def keyed(file: str | Path, table: str, field: str = "words") -> dict[str, tuple[str, ...]]:
    """Each entry's `key` with its `field` list, in file order; a key given by several entries (words
    with different reasons) has their lists one after the other."""
    table_words: dict[str, tuple[str, ...]] = {}
    for entry in entries(file, table):
        table_words[entry.key] = (*table_words.get(entry.key, ()), *entry.strings(field))
    return table_words


def keys(file: str | Path, table: str) -> tuple[str, ...]:
    """The `key` of each entry of a keyed table, in file order, once each (roles.toml periods: day, week …)."""
    return tuple(dict.fromkeys(entry.key for entry in entries(file, table)))


def word_alternation(file: str | Path, table: str, field: str = "words") -> str:
    """The table's plain words as a regular expression that matches any of them: `a|b|c` in file
    order, each word escaped (Chinese and plain English words are left as they are)."""
    return "|".join(map(re.escape, words(file, table, field)))


def characters(file: str | Path, table: str) -> str:
    """Every entry's `characters` (each character one item), one after the other."""
    return "".join(entry.text("characters") for entry in entries(file, table))


def pairs(file: str | Path, table: str, field: str = "pairs") -> tuple[tuple[str, str], ...]:
    """Every entry's `field` pairs, one after the other, in file order."""
    return tuple(pair for entry in entries(file, table) for pair in entry.pairs(field))


def patterns(file: str | Path, table: str, *, field: str = "patterns", **structures: str) -> tuple[str, ...]:
    """Every entry's regular expressions, in file order. An item `{name}` is the pattern
    `structures[name]`, which the module keeps in code (it has real structure: a lookaround, an
    anchor, a number); each one given must be used. Not compiled here: the module's pattern that
    holds them is (`regex` compiles a table on its own and names the entry at fault), and
    tests/test_vocabulary.py compiles every item of every file."""
    table_entries = entries(file, table)
    found = tuple(p for entry in table_entries for p in entry.patterns(field, structures))
    used = {m.group(1) for entry in table_entries for p in entry.strings(field) if (m := _PLACEHOLDER.fullmatch(p))}
    unused = [name for name in structures if name not in used]
    if unused:
        raise VocabularyError(f"{_path(file).name}: [[{table}]] never uses {{{', '.join(unused)}}}")
    return found


def alternation(file: str | Path, table: str, *, field: str = "patterns", **structures: str) -> str:
    """The table's regular expressions (see `patterns`) as one: `a|b|c` in file order."""
    return "|".join(patterns(file, table, field=field, **structures))


def regex(
    file: str | Path, table: str, flags: int = 0, *, field: str = "patterns", **structures: str
) -> re.Pattern[str]:
    """The table's regular expressions (see `patterns`) compiled as one, `a|b|c`, with `flags`. An
    item that is not a regular expression is named with its entry."""
    joined = alternation(file, table, field=field, **structures)
    try:
        return re.compile(joined, flags)
    except re.error as exc:
        for entry in entries(file, table):
            entry.check(field)
        raise VocabularyError(f"{_path(file).name}: [[{table}]] is not a regular expression: {exc}") from exc
