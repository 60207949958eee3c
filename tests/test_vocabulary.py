"""The understanding's vocabulary as data (issue 22): every file loads and every entry says why it
exists; a malformed file or entry is refused with an error naming the file and the entry; no word
list is written into the understanding's Python modules again."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from app.understanding import vocabulary
from app.understanding.vocabulary import VocabularyError

REPO = Path(__file__).resolve().parents[1]
FILES = sorted(vocabulary.FOLDER.glob("*.toml"))
INTENT_WORDS = REPO / "app" / "agent" / "policy" / "intent_words.toml"


@pytest.mark.parametrize("path", [*FILES, INTENT_WORDS], ids=lambda p: p.name)
def test_every_file_loads_and_every_entry_says_why(path):
    text = path.read_text(encoding="utf-8")
    tables = {line.strip()[2:-2] for line in text.splitlines() if line.startswith("[[")}
    assert tables
    for table in tables:
        for entry in vocabulary.entries(path, table):
            assert len(entry.why.split()) >= 2, entry.place


@pytest.mark.parametrize("path", [*FILES, INTENT_WORDS], ids=lambda p: p.name)
def test_every_pattern_is_a_regular_expression_on_its_own(path):
    """Patterns are compiled inside the module's larger patterns (or at a question's first use in the
    harness); this names the entry of one that would not compile."""
    text = path.read_text(encoding="utf-8")
    for table in {line.strip()[2:-2] for line in text.splitlines() if line.startswith("[[")}:
        for entry in vocabulary.entries(path, table):
            for field in ("patterns", "zh", "en"):  # zh, en: the restrictions' topics (intent_words.toml)
                if isinstance(entry.fields.get(field), list):
                    entry.check(field)


def test_every_file_is_read_by_a_module():
    sources = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "app" / "understanding").glob("*.py"))
    for path in FILES:
        assert f'"{path.stem}"' in sources, f"{path.name} is read by no module of app/understanding"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "words.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_bad_toml_names_the_file(tmp_path):
    with pytest.raises(VocabularyError, match=r"words\.toml: not valid TOML"):
        vocabulary.entries(_write(tmp_path, "[[stop]\nwhy = 'x'\n"), "stop")


def test_an_entry_without_a_reason_is_refused(tmp_path):
    path = _write(tmp_path, '[[stop]]\nwhy = "function words"\nwords = ["the"]\n\n[[stop]]\nwords = ["a"]\n')
    with pytest.raises(VocabularyError, match=r"words\.toml: \[\[stop\]\] entry 2: `why` must be a non-empty string"):
        vocabulary.words(path, "stop")


def test_a_field_of_the_wrong_shape_names_the_entry_and_its_key(tmp_path):
    path = _write(tmp_path, '[[columns]]\nkey = "revenue"\nwhy = "Chinese words"\nwords = "收入"\n')
    with pytest.raises(
        VocabularyError, match=r"\[\[columns\]\] entry 1 \(key 'revenue'\): `words` must be a non-empty list"
    ):
        vocabulary.keyed(path, "columns")


def test_a_table_that_is_not_a_list_of_entries_is_refused(tmp_path):
    with pytest.raises(VocabularyError, match=r"`stop` must be a list of \[\[stop\]\] entries"):
        vocabulary.words(_write(tmp_path, '[stop]\nwhy = "x y"\n'), "stop")


def test_a_missing_table_is_named(tmp_path):
    with pytest.raises(VocabularyError, match=r"words\.toml: no \[\[rate\]\] entries"):
        vocabulary.words(_write(tmp_path, '[[stop]]\nwhy = "function words"\nwords = ["the"]\n'), "rate")


def test_a_pattern_that_is_no_regular_expression_names_its_entry(tmp_path):
    path = _write(
        tmp_path,
        "[[rate]]\nwhy = \"English rate words\"\npatterns = ['\\brates?\\b']\n\n"
        '[[rate]]\nwhy = "Chinese rate words"\npatterns = ["比例", "率("]\n',
    )
    with pytest.raises(VocabularyError, match=r"\[\[rate\]\] entry 2: '率\(' is not a regular expression"):
        vocabulary.regex(path, "rate")
    with pytest.raises(VocabularyError, match=r"\[\[rate\]\] entry 2: '率\(' is not a regular expression"):
        vocabulary.entries(path, "rate")[1].check()


def test_placeholders_are_the_code_s_patterns_and_each_is_used(tmp_path):
    path = _write(tmp_path, '[[total]]\nwhy = "words for adding up"\npatterns = ["sum", "{before_noun}"]\n')
    assert vocabulary.alternation(path, "total", before_noun="总(?=[一-龥])") == "sum|总(?=[一-龥])"
    with pytest.raises(VocabularyError, match=r"`\{before_noun\}` names no pattern the code gives"):
        vocabulary.alternation(path, "total")
    with pytest.raises(VocabularyError, match=r"never uses \{extra\}"):
        vocabulary.alternation(path, "total", before_noun="总", extra="x")


def test_a_file_is_read_once(tmp_path):
    path = _write(tmp_path, '[[stop]]\nwhy = "function words"\nwords = ["the"]\n')
    assert vocabulary.words(path, "stop") == ("the",)
    path.write_text('[[stop]]\nwhy = "function words"\nwords = ["a"]\n', encoding="utf-8")
    assert vocabulary.words(path, "stop") == ("the",)  # kept: the modules read their words at import


# Module-level collections of strings that are not the vocabulary of a question: names of the code's
# own things, and the spelling rules' suffix patterns.
NOT_VOCABULARY = {
    ("__init__.py", "__all__"),
    ("spelling.py", "_ENDINGS"),
    ("spelling.py", "_AFTER"),
}


def test_no_word_list_is_written_into_the_understanding_s_modules():
    """A literal collection of eight strings or more (or a string split into as many words) at the top
    of a module is a word list: it belongs in vocabulary/ with a reason per entry."""
    found = []
    for path in sorted((REPO / "app" / "understanding").glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
                continue
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            name = target.id if isinstance(target, ast.Name) else ast.unparse(target)
            literal_type = isinstance(node.value, ast.Subscript) and ast.unparse(node.value.value) == "Literal"
            if (path.name, name) in NOT_VOCABULARY or literal_type:  # a type's values are the code's names
                continue
            for inner in ast.walk(node.value):
                items = inner.keys if isinstance(inner, ast.Dict) else getattr(inner, "elts", None)
                if isinstance(inner, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
                    strings = sum(isinstance(i, ast.Constant) and isinstance(i.value, str) for i in items or [])
                elif (
                    isinstance(inner, ast.Call)
                    and isinstance(inner.func, ast.Attribute)
                    and inner.func.attr == "split"
                    and isinstance(inner.func.value, ast.Constant)
                ):
                    strings = len(str(inner.func.value.value).split())
                else:
                    continue
                if strings >= 8 and not (isinstance(inner, ast.Call) and _numerals(inner)):
                    found.append(f"{path.name}: {name}")
    assert found == []


def _numerals(call: ast.Call) -> bool:
    """The numerals one … twelve with their values stay with the number patterns that read them."""
    assert isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Constant)
    return str(call.func.value.value).split()[:3] == ["one", "two", "three"]
