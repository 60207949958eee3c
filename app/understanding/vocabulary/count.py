"""How much vocabulary is written by hand (issue 24: the count must fall, never rise).

`python -m app.understanding.vocabulary count` prints, for every TOML file under app/, the number of
strings per table and per file — every string of an entry except its `why` and `key` (a `characters`
string counts once, a pattern counts once, a pair counts twice) — and then the word lists still written
inline in the Python modules of the reading (app/understanding, app/analyst, app/agent/policy): a
module-level constant that is a list, tuple or set (or frozenset of one) of at least three string
literals that read as words of a language: one of them is not ASCII or holds a space, or the constant
is named as words (…_ZH, …_EN, …WORDS, …CUES, STOP…). Lists of the code's own names (tool names, kinds
of question, `__all__`) are not vocabulary and are left out. `--total` prints the two totals only; `--json` prints everything as JSON.
"""

from __future__ import annotations

import ast
import json
import sys
import tomllib
from collections.abc import Iterable
from pathlib import Path

APP = Path(__file__).resolve().parents[2]
ROOT = APP.parent
# Where inline word lists are looked for: the reading of questions and the harness's word rules.
_PYTHON_FOLDERS = ("understanding", "analyst", "agent/policy")
_NOT_WORDS = {"why", "key"}
_SMALLEST_LIST = 3  # two strings are a pair of names (a column's and its label), not a word list
_WORDY_NAMES = ("_ZH", "_EN", "WORD", "CUE", "STOP")


def _is_word_list(name: str, node: ast.expr) -> bool:
    """Whether a constant's strings are words of a language rather than the code's own names."""
    if name in {"__all__", "_WORDY_NAMES"}:  # the module's exports; this counter's own markers
        return False
    texts = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return any(not t.isascii() or " " in t for t in texts) or any(part in name.upper() for part in _WORDY_NAMES)


def _strings(value: object) -> int:
    """The number of strings in a TOML value, leaving out the `why` and `key` of every table."""
    if isinstance(value, str):
        return 1
    if isinstance(value, list):
        return sum(_strings(item) for item in value)
    if isinstance(value, dict):
        return sum(_strings(item) for name, item in value.items() if name not in _NOT_WORDS)
    return 0


def toml_counts(root: Path = APP) -> dict[str, dict[str, int]]:
    """{file relative to the repository: {table: strings}} for every TOML file under `root`, sorted."""
    found: dict[str, dict[str, int]] = {}
    for path in sorted(root.rglob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        found[str(path.relative_to(root.parent))] = {table: _strings(value) for table, value in data.items()}
    return found


def _literal_strings(node: ast.expr) -> int:
    """The number of string literals of a list, tuple or set display (or frozenset/set/tuple of one);
    0 when the node is anything else or holds anything but string literals."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1:
        if node.func.id in {"frozenset", "set", "tuple"}:
            return _literal_strings(node.args[0])
        return 0
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        if node.elts and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
            return len(node.elts)
    return 0


def _module_constants(tree: ast.Module) -> Iterable[tuple[str, ast.expr]]:
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name):
                yield target.id, statement.value
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value:
            yield statement.target.id, statement.value


def inline_counts(root: Path = APP) -> dict[str, dict[str, int]]:
    """{module relative to the repository: {constant: strings}} for the word lists written in Python."""
    found: dict[str, dict[str, int]] = {}
    for folder in _PYTHON_FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            lists = {
                name: n
                for name, value in _module_constants(tree)
                if (n := _literal_strings(value)) >= _SMALLEST_LIST and _is_word_list(name, value)
            }
            if lists:
                found[str(path.relative_to(root.parent))] = lists
    return found


def _report(title: str, counts: dict[str, dict[str, int]]) -> list[str]:
    lines = [title]
    for file, tables in counts.items():
        lines.append(f"{sum(tables.values()):6d}  {file}")
        lines += [f"{n:14d}  {table}" for table, n in tables.items()]
    total = sum(sum(t.values()) for t in counts.values())
    lines.append(f"{total:6d}  total")
    return lines


def main(argv: list[str]) -> int:
    """Print the counts; the options are `--total` and `--json`."""
    toml, inline = toml_counts(), inline_counts()
    toml_total = sum(sum(t.values()) for t in toml.values())
    inline_total = sum(sum(t.values()) for t in inline.values())
    if "--json" in argv:
        print(
            json.dumps(
                {"toml": toml, "inline": inline, "toml_total": toml_total, "inline_total": inline_total}, indent=1
            )
        )
    elif "--total" in argv:
        print(f"toml {toml_total}\ninline {inline_total}\nall {toml_total + inline_total}")
    else:
        print(
            "\n".join(
                [
                    *_report("TOML vocabulary strings (not why/key):", toml),
                    "",
                    *_report("Inline word lists in Python:", inline),
                ]
            )
        )
        print(f"\n{toml_total + inline_total:6d}  all hand-written vocabulary strings")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
