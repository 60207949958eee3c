"""lemminflect's English dictionary (its lemma and inflection tables), loaded once per process, from a
copy kept on disk where the process named a folder for it.

lemminflect parses its two gzipped tables on the first look-up: ~0.35 s of CPU in every process that
reads an English question (every `verity analyze`: the stop words are read through it). The tables
depend only on lemminflect's files, so a process that keeps its work in a data dir
(`keep_english_dictionary_in`: DATA_DIR/cache, named by app/runs.py) reads them from one marshal file there instead (~0.15 s),
written by the first process that parsed them: the same dicts lemminflect's codecs make, set where
lemminflect's own first look-up would set them. The file is named by the tables' sizes and times and
the interpreter's marshal version (another lemminflect or Python never reads it), and replaced whole
(another process reads the old file or the new one); a folder that cannot be written only costs the
parse again. Without a folder (a test, `verity eval`) lemminflect loads its tables itself.
"""

from __future__ import annotations

import hashlib
import logging
import marshal
import os
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

log = logging.getLogger(__name__)

_kept: list[Path] = []  # the folder named by keep_english_dictionary_in (one, or none)


def keep_english_dictionary_in(folder: Path) -> None:
    """Keep the tables in `folder` (read from it, or written to it after the parse). Named before the
    first look-up; a process that looked a word up before keeps what it loaded."""
    _kept[:] = [Path(folder)]


@cache
def lemminflect() -> ModuleType:
    """The lemminflect module, its tables loaded (from the kept copy where there is one). Raises
    ImportError where lemminflect is not installed, as importing it would."""
    import lemminflect as module
    from lemminflect.core.Inflections import Inflections
    from lemminflect.core.Lemmatizer import Lemmatizer

    lemmatizer, inflections = Lemmatizer(), Inflections()
    if _kept and not hasattr(lemmatizer, "lemma_dict") and not hasattr(inflections, "infl_dict"):
        lemmatizer.lemma_dict, inflections.infl_dict = _tables(_kept[0], lemmatizer.lemma_lu_fn, inflections.infl_lu_fn)
    loaded: ModuleType = module
    return loaded


def _tables(folder: Path, lemma_file: str, inflection_file: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the lemma table, the inflection table) as lemminflect's codecs read them from its files: from
    the copy in `folder` when an earlier process wrote it, else parsed and written there."""
    from lemminflect.codecs.InflectionLUCodec import InflectionLUCodec
    from lemminflect.codecs.LemmaLUCodec import LemmaLUCodec

    stats = [os.stat(name) for name in (lemma_file, inflection_file)]
    key = "\x00".join([*(f"{s.st_size}:{s.st_mtime_ns}" for s in stats), str(marshal.version), sys.version])
    path = folder / f"lemminflect-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:20]}.marshal"
    try:
        lemmas, inflections = marshal.loads(path.read_bytes())
        if isinstance(lemmas, dict) and isinstance(inflections, dict):
            return lemmas, inflections
    except FileNotFoundError:
        pass
    except (OSError, ValueError, EOFError, TypeError) as error:  # a damaged file: parse again, write it anew
        log.warning("kept English dictionary %s unreadable (%s); parsing lemminflect's tables", path, error)
    lemmas, inflections = LemmaLUCodec.load(lemma_file), InflectionLUCodec.load(inflection_file)
    try:
        folder.mkdir(exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        partial.write_bytes(marshal.dumps((lemmas, inflections)))
        os.replace(partial, path)
        for old in folder.glob("lemminflect-*.marshal"):  # tables of another lemminflect: never read again
            if old != path:
                old.unlink(missing_ok=True)
    except OSError as error:  # a read-only or missing folder: this process keeps its own
        log.warning("English dictionary not kept in %s (%s)", folder, error)
    return lemmas, inflections
