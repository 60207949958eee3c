"""The counter of hand-written vocabulary (issue 24): what it counts and what it leaves out."""

from __future__ import annotations

from pathlib import Path

from app.understanding.vocabulary import count


def test_toml_strings_leave_out_why_and_key(tmp_path: Path) -> None:
    (tmp_path / "words.toml").write_text(
        '[[stop]]\nwhy = "a reason in words"\nkey = "k"\nwords = ["a", "b", "c"]\n'
        '[[pairs]]\nwhy = "two markers"\npairs = [["before", "after"]]\ncharacters = "个各每"\n',
        encoding="utf-8",
    )
    counts = count.toml_counts(tmp_path)
    assert list(counts.values()) == [{"stop": 3, "pairs": 3}]


def test_inline_word_lists_and_not_the_codes_own_names(tmp_path: Path) -> None:
    folder = tmp_path / "understanding"
    folder.mkdir()
    (folder / "m.py").write_text(
        'MEASURE_ZH = ("数", "量", "额")\nKINDS = ("chat", "consult", "analysis")\n'
        '__all__ = ["a", "b", "c"]\nSTOP_WORDS = frozenset({"the", "a", "of"})\nPAIR = ("x", "y")\n',
        encoding="utf-8",
    )
    assert list(count.inline_counts(tmp_path).values()) == [{"MEASURE_ZH": 3, "STOP_WORDS": 3}]


def test_the_repository_is_counted() -> None:
    counts = count.toml_counts()
    assert counts["app/understanding/vocabulary/unmatched_words.toml"]["row_words"] > 0
