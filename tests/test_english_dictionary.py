"""lemminflect's tables kept in the data dir (app/understanding/english_dictionary.py): the first process
parses them and writes the copy, a later one reads the copy instead of parsing, and looks words up as
lemminflect's own tables do."""

import pytest
from lemminflect.codecs.InflectionLUCodec import InflectionLUCodec
from lemminflect.codecs.LemmaLUCodec import LemmaLUCodec
from lemminflect.core.Inflections import Inflections
from lemminflect.core.Lemmatizer import Lemmatizer

from app.understanding import english_dictionary


@pytest.fixture
def new_process(monkeypatch):
    """As a new process finds lemminflect: no table loaded yet, no folder named (all put back after)."""

    def start() -> None:
        english_dictionary.lemminflect.cache_clear()
        monkeypatch.delattr(Lemmatizer(), "lemma_dict", raising=False)
        monkeypatch.delattr(Inflections(), "infl_dict", raising=False)
        monkeypatch.setattr(english_dictionary, "_kept", [])

    start()
    yield start
    english_dictionary.lemminflect.cache_clear()


def test_the_tables_are_parsed_once_and_read_from_the_kept_copy_after(tmp_path, monkeypatch, new_process):
    parsed = {"lemmas": LemmaLUCodec.load(Lemmatizer().lemma_lu_fn)}
    real_load = InflectionLUCodec.load
    counted: list[str] = []

    def counting(fn):
        counted.append(fn)
        return real_load(fn)

    monkeypatch.setattr(InflectionLUCodec, "load", staticmethod(counting))
    english_dictionary.keep_english_dictionary_in(tmp_path / "cache")
    first = english_dictionary.lemminflect()
    assert first.getAllLemmas("women") == {"NOUN": ("woman",)}
    assert first.getInflection("give", tag="VBD") == ("gave",)
    assert len(counted) == 1
    kept = list((tmp_path / "cache").glob("lemminflect-*.marshal"))
    assert len(kept) == 1

    new_process()  # a later process: the copy, not the codecs
    monkeypatch.setattr(LemmaLUCodec, "load", staticmethod(lambda fn: pytest.fail("parsed again")))
    monkeypatch.setattr(InflectionLUCodec, "load", staticmethod(lambda fn: pytest.fail("parsed again")))
    english_dictionary.keep_english_dictionary_in(tmp_path / "cache")
    later = english_dictionary.lemminflect()
    assert Lemmatizer().lemma_dict == parsed["lemmas"]
    assert later.getAllLemmas("women") == {"NOUN": ("woman",)}
    assert later.getAllInflections("be", upos="AUX")["VBD"] == ("was", "were")
    assert later.getInflection("give", tag="VBN") == ("given",)


def test_a_damaged_copy_is_parsed_again_and_written_anew(tmp_path, monkeypatch, new_process):
    english_dictionary.keep_english_dictionary_in(tmp_path)
    english_dictionary.lemminflect()
    (kept,) = tmp_path.glob("lemminflect-*.marshal")
    whole = kept.read_bytes()
    kept.write_bytes(whole[: len(whole) // 2])

    new_process()
    english_dictionary.keep_english_dictionary_in(tmp_path)
    assert english_dictionary.lemminflect().getAllLemmas("stores") == {"NOUN": ("store",), "VERB": ("store",)}
    assert kept.read_bytes() == whole


def test_without_a_folder_lemminflect_loads_its_own_tables(tmp_path, new_process):
    assert english_dictionary.lemminflect().getAllLemmas("women") == {"NOUN": ("woman",)}
    assert not list(tmp_path.iterdir())
