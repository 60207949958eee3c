"""The understanding's vocabulary loader (issue 22): a malformed file or entry is refused with an
error naming the file and the entry; a file is read once."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.understanding import vocabulary
from app.understanding.vocabulary import VocabularyError


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
