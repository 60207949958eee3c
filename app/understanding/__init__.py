"""Reading a question against the data (issue 14, 22): which dataset it is about, which columns and
values its words name and how, the roles they play (outcome, groups, predictors, dates), and the
designs it implies (a wide pair, repeated measures, weekend against weekdays, a count table).

Pure functions over the question's text and dataset summaries (the `dataset_summary` shape, with
what a profile showed: profile_reading). Nothing here imports the harness (app.agent), the built-in
analyst (app.analyst) or the database: a reading can be tested, and reused, on its own.

    reading.py        Reading and read_question: the typed result the analyst plans from
    words.py          a question's words against column names: stems, synonyms, abbreviations
    column_forms.py   shorter forms of a column's name; value_matching.py everyday forms of values
    spelling.py       British and American spellings; everyday_words.py everyday concepts
    roles.py          which column each phrase names and the roles the question gives them
    role_sources.py   where each role's column came from; the words that name nothing
    segment.py        where Chinese words begin and end (jieba, loaded on first use)
    dataset_choice.py which dataset of a workspace the question is about
    kinds.py          the kind of question (total, top N, paired, follow-up ...); outcome.py rates
    wide_pairs.py, repeated_design.py, weekdays.py, count_pairs.py   designs in the data
    profile_reading.py  column facts read back from a profile
    gate_words.py     the clarification gates' vocabulary; small_talk.py greetings
    vocabulary/       the words all of these read, as data: one TOML file per concern, each entry
                      with the reason it exists, and their loader (vocabulary/README.md)
"""

from app.understanding.dataset_choice import Choice, Fit, choose_dataset, data_tables, describe_fit, with_values
from app.understanding.english_dictionary import keep_english_dictionary_in
from app.understanding.language import question_language
from app.understanding.reading import Reading, read_question
from app.understanding.role_sources import NO_FILTER, unmatched_words
from app.understanding.roles import (
    Mention,
    column_mentions,
    column_spans,
    in_spoken_names,
    spoken_names,
    tables_spoken_names,
)
from app.understanding.small_talk import is_small_talk
from app.understanding.text import header_leaf
from app.understanding.words import SYNONYMS, question_key

__all__ = [
    "NO_FILTER",
    "header_leaf",
    "in_spoken_names",
    "spoken_names",
    "tables_spoken_names",
    "SYNONYMS",
    "Choice",
    "Fit",
    "Mention",
    "Reading",
    "choose_dataset",
    "column_mentions",
    "column_spans",
    "data_tables",
    "describe_fit",
    "is_small_talk",
    "keep_english_dictionary_in",
    "question_key",
    "question_language",
    "read_question",
    "unmatched_words",
    "with_values",
]
