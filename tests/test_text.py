"""The text module of the reading (app/understanding/text.py): Chinese cut into real words by jieba,
English words to their dictionary form by simplemma, one normalisation of width, brackets, case and
units — and neither library loaded before a text is read."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from app.understanding.text import fold, lemma, normalise, split_unit, tokens
from app.understanding.words import stem


def test_a_chinese_question_is_cut_into_its_words():
    words = [t.word for t in tokens("哪个门店的销售额最高？")]
    # the column words come out whole, never as a piece of a longer run or across a word edge
    assert "门店" in words and "销售额" in words
    assert "店的" not in words and "的销" not in words
    assert all(t.is_cjk for t in tokens("哪个门店的销售额最高？"))


def test_tokens_carry_their_place_in_the_original_text():
    text = "Which ＳＴＯＲＥＳ sold 销售额 most?"
    for token in tokens(text):
        assert fold(text[token.start : token.end]) == token.word
    found = {t.word: t for t in tokens(text)}
    assert found["stores"].lemma == "store" and not found["stores"].is_cjk
    assert found["销售额"].is_cjk and found["销售额"].lemma == "销售额"
    assert "?" not in found and " " not in found  # punctuation and spaces are not words


@pytest.mark.parametrize(
    ("word", "expected"),
    [("stores", "store"), ("sold", "sell"), ("Women", "woman"), ("children", "child"), ("bought", "buy")],
)
def test_english_words_have_their_dictionary_form(word, expected):
    assert lemma(word) == expected


def test_words_that_are_not_english_are_their_own_lemma():
    assert lemma("销售额") == "销售额"
    assert lemma("x2") == "x2"
    assert lemma("2024") == "2024"


def test_the_stem_meets_irregular_forms_through_the_lemma():
    # the suffix stripper alone kept these apart ("sold" is not "sell" + a suffix)
    assert stem("sold") == stem("sell")
    assert stem("women") == stem("woman")
    assert stem("children") == stem("child")
    # and still joins the forms the stripper joined before
    assert stem("survived") == stem("survive")
    assert stem("smoking") == stem("smoke")
    assert stem("cancelled") == stem("cancel")


def test_full_width_and_brackets_fold_character_for_character():
    text = "ＡＢＣ　销量（件）【注】［1］"
    folded = fold(text)
    assert len(folded) == len(text)
    assert folded == "abc 销量(件)(注)(1)"


def test_normalise_spells_out_units_and_collapses_spaces():
    assert normalise("面积（㎡）") == "面积(m2)"
    assert normalise("  Weight\u3000（ＫＧ）  ") == "weight (kg)"


def test_a_unit_in_brackets_is_split_from_the_name():
    assert split_unit("Delivery Time (MIN)") == ("delivery time", "min")
    assert split_unit("面积（㎡）") == ("面积", "m2")
    assert split_unit("亩产【kg】") == ("亩产", "kg")
    assert split_unit("Revenue") == ("revenue", None)
    assert split_unit("(note)") == ("(note)", None)  # a bracket alone is the name, not a unit


def _modules_after(code: str) -> set[str]:
    probe = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=300)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_the_libraries_are_loaded_on_first_use_only():
    modules = _modules_after("import app.understanding.text, app.understanding.words, app.understanding.segment")
    assert "jieba" not in modules and "simplemma" not in modules
    modules = _modules_after("from app.understanding.text import tokens\ntokens('哪个门店 sold most')")
    assert "jieba" in modules and "simplemma" in modules


def test_the_question_words_come_from_the_tokens():
    from app.understanding.words import words_at

    text = "Which women's ＳＴＯＲＥＳ sold 销售额sales?"
    found = words_at(text)
    # full-width letters are words too (the pattern over ASCII letters skipped them), and the clitic
    # of a possessive is part of the word before it, not a word "s"
    assert [w for _, _, w in found] == ["which", "women", "stores", "sold", "sales"]
    assert all(fold(text[s:e]) == w for s, e, w in found)


# --- one rule per job (issue 24): plain words, closed classes, the words inside a word -------------


def test_plain_words_split_case_underscores_and_scripts() -> None:
    from app.understanding.text import plain_words

    assert plain_words("passengerClass") == ["passenger", "class"]
    assert plain_words("Unit_Price (USD)") == ["unit", "price", "usd"]
    assert plain_words("销售额2024") == ["销售额", "2024"]
    assert plain_words("Ｑ３ Sales！") == ["q3", "sales"]


def test_closed_class_words_are_found_by_the_tagger() -> None:
    from app.understanding.text import closed_class_spans

    text = "哪个门店的销售额最高"
    assert [text[a:b] for a, b in closed_class_spans(text)] == ["哪个", "的"]
    text = "会员和非会员之间的消费有没有差异"
    assert [text[a:b] for a, b in closed_class_spans(text)] == ["和", "之间", "的"]
    # a time word is not closed: the weekend may be what the data lacks
    assert "周末" not in [t[a:b] for t in ["周末顾客是否更多"] for a, b in closed_class_spans(t)]


def test_inner_words_of_a_long_chinese_word() -> None:
    from app.understanding.text import inner_words

    assert inner_words("销售额") == ("销售", "销售额")
    assert inner_words("口径") == ("口径",)
    assert inner_words("revenue") == ("revenue",)


def test_general_english_words_in_any_form() -> None:
    from app.understanding.general_words import is_general_en, is_row_word

    for word in ("compared", "drivers", "went", "the", "highest", "months"):
        assert is_general_en(word), word
    for word in ("rainy", "salary", "weather"):
        assert not is_general_en(word), word
    assert is_row_word("customers") and is_row_word("customer") and not is_row_word("purchase")


def test_scikit_learns_stop_words_are_read_without_importing_it() -> None:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    from app.understanding.text import english_stop_words

    assert english_stop_words() == frozenset(ENGLISH_STOP_WORDS)
    modules = _modules_after("from app.understanding.text import english_stop_words\nenglish_stop_words()")
    assert "sklearn" not in modules


def test_an_english_text_has_no_closed_class_spans_and_loads_no_tagger() -> None:
    from app.understanding.text import closed_class_spans

    assert closed_class_spans("thanks a lot") == () and closed_class_spans("which store sold most") == ()
    modules = _modules_after(
        "from app.understanding.small_talk import is_small_talk\nprint(is_small_talk('thanks a lot'))"
    )
    assert "jieba" not in modules


def _jieba_spans(text: str) -> tuple[tuple[int, int], ...]:
    import jieba

    return tuple((start, end) for _, start, end in jieba.tokenize(text))


def test_text_without_han_is_cut_as_jieba_cuts_it_without_its_dictionary() -> None:
    import random

    from app.understanding.text import DICTIONARY_MARK, JIEBA_HAN, _spans_without_han, word_spans

    texts = [
        "Does revenue differ by region?",
        "p-value < 0.05; 3.5% of 1,234 rows (e.g. x+y=z)",
        "naïve café ÄÖ ＳＴＯＲＥ 📈 tabs\tand\r\nnew lines\n",
        "Q3-2024_sales (USD) 3.14.15 1.5%% 50%off #hash &amp x__y..z",
        "ㄱ한국어 テスト \u3400 \u9fd6 \uf900",  # Han outside jieba's range is one character a word
        "",
        "a",
    ]
    chance = random.Random(7)
    alphabet = "abcXYZ019+#&._%- \t\n\r,;:!?()[]'\"/é"
    texts += ["".join(chance.choice(alphabet) for _ in range(chance.randint(1, 25))) for _ in range(2000)]
    unmarked = alphabet.translate({ord(c): None for c in "+#&"})
    texts += ["".join(chance.choice(unmarked) for _ in range(chance.randint(1, 25))) for _ in range(2000)]
    ruled = 0
    for text in texts:
        assert not JIEBA_HAN.search(text)
        assert word_spans(text) == _jieba_spans(text), text
        if not DICTIONARY_MARK.search(text):  # the rule's own texts (one with & # or + goes to jieba)
            ruled += 1
            assert _spans_without_han(text) == _jieba_spans(text), text
    assert ruled > 2000


def test_the_dictionary_words_of_latin_characters_all_hold_a_mark() -> None:
    # a text holding one goes to jieba itself: the rule above holds only where the dictionary has none
    import re

    import jieba

    from app.understanding.text import DICTIONARY_MARK, word_spans

    jieba.initialize()
    latin = sorted(w for w, freq in jieba.dt.FREQ.items() if freq and re.fullmatch(r"[a-zA-Z0-9+#&._%\-]+", w))
    assert latin and all(DICTIONARY_MARK.search(w) for w in latin), latin
    for text in ("written in c++ and c#", "at&t customers", "C++"):
        assert word_spans(text) == _jieba_spans(text)


def test_an_english_question_loads_no_segmenter_dictionary() -> None:
    code = (
        "from app.understanding.text import tokens\n"
        "tokens('Which store sold the most in Q3-2024 (USD)?')\n"
        "import sys; print('jieba' in sys.modules)"
    )
    assert "jieba" not in _modules_after(code)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("每月要多少天才结账", ["多少", "天", "才", "结账"]),  # 天才 "genius" is two words here
        ("3天才到", ["3", "天", "才", "到"]),
        ("有多少个人报名", ["多少", "个", "人", "报名"]),  # 个人 "individual"
        ("天才少年有多少", ["天才少年", "有", "多少"]),  # no numeral before it: the word stays whole
    ],
)
def test_a_measure_word_after_a_numeral_is_not_run_into_the_next_word(text: str, words: list[str]) -> None:
    from app.understanding.text import tagged_words, word_spans

    cut = [text[start:end] for start, end in word_spans(text)]
    tagged = [word for word, _, _, _ in tagged_words(text)]
    for found in (cut, tagged):
        assert found[found.index(words[0]) : found.index(words[0]) + len(words)] == words
