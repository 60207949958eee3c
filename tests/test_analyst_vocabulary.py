"""The built-in analyst's vocabulary is data (app/analyst/vocabulary.toml): every entry says why it
exists, holds words, and is read by a module of app/analyst; the wheel ships the file."""

from __future__ import annotations

import re
from pathlib import Path

from app.analyst import vocabulary
from app.analyst.question_words import KEYWORDS, wants
from app.analyst.role_question import MEASURE_EN, ROLE_WORDS
from app.analyst.totals import _PERIOD_UNITS

ANALYST = Path(vocabulary.__file__).parent


def entries(table: dict, path: str = ""):
    """(path, entry) for every entry: a table with `why`, or each of an array of such tables."""
    for name, value in table.items():
        here = f"{path}.{name}" if path else name
        if isinstance(value, list):
            yield from ((here, part) for part in value)
        elif "why" in value:
            yield here, value
        else:
            yield from entries(value, here)


def test_every_entry_says_why_it_exists_and_holds_words():
    found = list(entries(vocabulary.vocabulary()))
    assert len(found) >= 15  # the lists it shares with the gates live in gates.toml
    for path, entry in found:
        assert set(entry) == {"why", "words"}, path
        assert len(entry["why"]) >= 40, path  # a sentence, not a label
        assert entry["words"], path


def test_every_entry_is_read_by_the_analyst():
    code = "\n".join(p.read_text(encoding="utf-8") for p in ANALYST.glob("*.py") if p.name != "vocabulary.py")
    read = set(re.findall(r'(?:words|word_set|named_lists|pairs|pair_list|kinds)\(f?"([\w.{}]+)"\)', code))
    # a list merged with the understanding's is read by vocabulary.py's function named after it (period_units())
    read |= {name for name in re.findall(r"\b(\w+)\(\)", code) if callable(getattr(vocabulary, name, None))}
    for path, _ in entries(vocabulary.vocabulary()):
        assert path in read or (path.startswith("keywords.") and "keywords.{kind}" in read), path


def test_the_lists_read_as_the_modules_use_them():
    assert KEYWORDS["regress"][:3] == ("driver", "drive", "factor") and "哪个" in KEYWORDS["compare"]
    assert {"compare", "correlate", "regress", "predict", "trend"} == set(KEYWORDS)
    assert wants("What matters most for the score?", "regress") and wants("Why is it low?", "drivers")
    assert wants("下周的营业额会是多少", "forecast") and not wants("上周的营业额是多少", "forecast")
    assert "takings" in MEASURE_EN and ROLE_WORDS["group"] == ("the groups compared", "分组")
    assert _PERIOD_UNITS["dai"] == _PERIOD_UNITS["day"] and _PERIOD_UNITS["季度"] == _PERIOD_UNITS["quarter"]


def test_the_wheel_ships_the_vocabulary():
    """hatch's wheel takes every file of the packages it lists that git does not ignore."""
    import tomllib

    project = tomllib.loads((ANALYST.parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    wheel = project["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert "app" in wheel["packages"] and not wheel.get("exclude") and not wheel.get("only-include")
    ignored = (ANALYST.parents[1] / ".gitignore").read_text(encoding="utf-8").split()
    assert not any(Path("app/analyst/vocabulary.toml").match(pattern) for pattern in ignored if pattern)
