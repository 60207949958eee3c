"""Embeddings of a fixed list of texts kept on disk between processes (DATA_DIR/cache).

Every `verity analyze` is a new process, and the question reading's example questions (intent.py's
prototypes, a few hundred) were embedded anew each time: seconds of a 10k-row run's fixed cost on
two cores. The vectors depend only on the texts and the model, so they are kept in one file named by
the model's version and a digest of the texts: a changed list or another model never reads old
vectors. The file is replaced whole (another process reads the old file or the new one); a data dir
that cannot be written only costs the embedding again.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

import numpy as np

from app.config import get_settings
from app.understanding import semantic

log = logging.getLogger(__name__)


def kept_vectors(name: str, texts: list[str], query: bool) -> np.ndarray:
    """`semantic.embed(texts, query)`, read from DATA_DIR/cache/<name>-<model>-<digest>.npy when an
    earlier process saved it, else embedded and saved."""
    digest = hashlib.sha256("\x00".join([str(query), *texts]).encode("utf-8")).hexdigest()[:20]
    data_dir = Path(get_settings().data_dir)
    folder = data_dir / "cache"
    path = folder / f"{name}-{semantic.model_version()}-{digest}.npy"
    try:
        vectors: np.ndarray = np.load(path, allow_pickle=False)
        if vectors.shape[0] == len(texts):
            return vectors
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as error:  # a damaged file: embed again and write it anew
        log.warning("kept vectors %s unreadable (%s); embedding again", path, error)
    vectors = np.asarray(semantic.embed(texts, query=query))
    if not data_dir.is_dir():  # a process that keeps its work elsewhere (`verity eval`): no data folder made for this
        return vectors
    try:
        folder.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with open(partial, "wb") as out:
            np.save(out, vectors, allow_pickle=False)
        os.replace(partial, path)
        for old in folder.glob(f"{name}-*.npy"):  # vectors of an earlier list or model: never read again
            if old != path:
                old.unlink(missing_ok=True)
    except OSError as error:  # a read-only data dir: this process keeps its own
        log.warning("kept vectors not saved to %s (%s)", path, error)
    return vectors
