"""Personal data and prompt-injection detection for uploaded tables (SPEC §6, §7).

Personal data is found by value pattern (ID-card checksum, mobile numbers, e-mail, Luhn card
numbers) and by column name. Masked copies go to previews and the model; analysis keeps real values.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import overload

import numpy as np
import pandas as pd
import pyarrow as pa

from app.ingest.textvalues import any_cell_may_match, known_distinct, regex_hits, text_array
from app.ingest.warnings_text import warning

KINDS = ("id_card", "phone", "email", "bank_card", "name", "address")

_ID_CARD = re.compile(r"^\d{17}[\dXx]$")
_MOBILE = re.compile(r"^(?:\+?86[\s-]?)?(1[3-9]\d{9})$")
_EMAIL = re.compile(r"^[\w.+\-]+@[\w\-]+(\.[\w\-]+)+$")
_CARD = re.compile(r"^\d{13,19}$")
_ID_WEIGHTS = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]
_ID_CHECK = "10X98765432"

# Column names that mean personal data; checked on the lowered, whitespace-collapsed name.
_NAME_RULES = [
    ("id_card", re.compile(r"身份证|id\s*card|identity\s*(card|number)|national\s*id|证件号")),
    ("bank_card", re.compile(r"银行卡|bank\s*card|card\s*(number|no)|卡号|account\s*number|账号")),
    ("phone", re.compile(r"phone|mobile|telephone|^tel$|电话|手机|联系方式")),
    ("email", re.compile(r"e-?mail|邮箱|电子邮件")),
    ("address", re.compile(r"address|地址|住址")),
    (
        "name",
        re.compile(
            r"^(customer|client|patient|employee|contact|full|first|last|given|family|passenger|"
            r"person|student|member|user)[\s_]*name$|^surname$|姓名|联系人|客户名$"
        ),
    ),
]
# A column called just "name" (or 名字/名称) may hold storms, products or cities: it is personal data
# only when its values look like people's names. A column with any other name needs stronger
# evidence: a title (Mr., Mrs., Dr.) or the "Surname, Given" form, as in passenger lists.
_GENERIC_NAME_COLUMN = re.compile(r"^(?:name|names|who|person|名字|名称|人名)$")
_TITLE = re.compile(
    r"(?<![A-Za-z])(?:Mr|Mrs|Ms|Miss|Mstr|Master|Dr|Rev|Prof|Mme|Mlle|Sir|Lady|Dame|Lord|Col|Capt|Major|"
    r"Don|Dona|Countess|Jonkheer|Messrs)\.?(?![A-Za-z])"
)
_WORD = r"[A-Z][a-z'’\-]+|[A-Z]\.?|(?:van|von|de|der|den|da|du|di|le|la|del|bin|al)"
_SURNAME_FIRST = re.compile(
    rf"^[A-Z][A-Za-z'’\-]+(?: [A-Z][A-Za-z'’\-]+)?, (?:{_WORD})(?: (?:{_WORD}|\(.*\)|\".*\"))*$"
)
_GIVEN_SURNAME = re.compile(rf"^(?:{_WORD})(?: (?:{_WORD})){{1,3}}$")
_ZH_NAME = re.compile(r"^[\u4e00-\u9fff]{2,4}$")
# The most common Chinese surnames (over 85% of people); a 2-4 character value starting with one.
_ZH_SURNAMES = set(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏"
    "韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
)
NAME_SHARE = 0.6  # share of sampled values that must look like people's names
NAME_DISTINCT = 0.5  # people rarely repeat in a list of people; a storm or product name repeats per row
VALUE_SHARE = 0.6  # share of sampled values that must match before a column is called personal

INJECTION = re.compile(
    r"ignore\s+(all\s+)?(the\s+)?(previous|prior|above|earlier)\s+(instructions|rules|prompts?)"
    r"|disregard\s+(all\s+)?(previous|prior|above)\s+\w+"
    r"|you\s+are\s+now\b|system\s+prompt|new\s+instructions\s*:"
    r"|忽略(以上|之前|上面|前面|上述)?(所有|全部)?的?(规则|指令|指示|要求|提示)"
    r"|无视(以上|之前|上述)|你现在是|系统提示词",
    re.I,
)
_INJECTION_ANYWHERE = "(?i)" + INJECTION.pattern.replace(r"\b", "")  # see _may_hold_instructions


def id_card_valid(text: str) -> bool:
    if not _ID_CARD.match(text):
        return False
    total = sum(int(d) * w for d, w in zip(text[:17], _ID_WEIGHTS))
    return _ID_CHECK[total % 11] == text[17].upper()


def luhn_valid(text: str) -> bool:
    if not _CARD.match(text):
        return False
    total = 0
    for i, ch in enumerate(reversed(text)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def value_kind(text: str) -> str | None:
    text = text.strip().replace(" ", "") if "@" not in text else text.strip()
    if id_card_valid(text):
        return "id_card"
    if _MOBILE.match(text):
        return "phone"
    if _EMAIL.match(text):
        return "email"
    if luhn_valid(text):
        return "bank_card"
    return None


def name_kind(column: str) -> str | None:
    lowered = " ".join(str(column).lower().split())
    for kind, pattern in _NAME_RULES:
        if pattern.search(lowered):
            return kind
    return None


def detect_pii(df: pd.DataFrame, sample: int = 500) -> dict[str, str]:
    found: dict[str, str] = {}
    for column in df.columns:
        kind = _kind_by_values(df[column], sample) or name_kind(column) or _person_names(column, df[column], sample)
        if kind:
            found[column] = kind
    return found


def looks_like_person_name(text: str, strong_only: bool = False) -> bool:
    """A value that reads as a person's name: with a title ("Braund, Mr. Owen Harris"), in the
    "Surname, Given" form, or (unless `strong_only`) two to four capitalised words ("Ada Lovelace")
    or a Chinese name (a common surname and one to three more characters)."""
    text = " ".join(str(text).split())
    if not text or any(ch.isdigit() for ch in text) or len(text) > 80:
        return False
    if _TITLE.search(text) and re.search(r"[A-Za-z]{2}", _TITLE.sub("", text)) or _SURNAME_FIRST.match(text):
        return True
    if strong_only:
        return False
    return bool(_GIVEN_SURNAME.match(text)) or bool(_ZH_NAME.match(text) and text[0] in _ZH_SURNAMES)


def _person_names(column, col: pd.Series, sample: int) -> str | None:
    """ "name" when the values are people's names, by evidence: a generic name column needs most
    values to look like names and to be mostly distinct; any other text column needs the strong
    forms (a title, "Surname, Given")."""
    if (
        pd.api.types.is_numeric_dtype(col)
        or pd.api.types.is_datetime64_any_dtype(col)
        or pd.api.types.is_bool_dtype(col)
    ):
        return None
    values = _first_values(col, sample, _stripped_texts)
    if len(values) < 2:
        return None
    generic = bool(_GENERIC_NAME_COLUMN.match(" ".join(str(column).lower().split())))
    share = values.map(lambda v: looks_like_person_name(v, strong_only=not generic)).mean()
    distinct = values.nunique() / len(values)
    return "name" if share >= NAME_SHARE and distinct >= NAME_DISTINCT else None


def _kind_by_values(col: pd.Series, sample: int) -> str | None:
    if pd.api.types.is_float_dtype(col) or pd.api.types.is_bool_dtype(col) or pd.api.types.is_datetime64_any_dtype(col):
        return None  # personal numbers are stored as text; floats would have lost digits anyway
    if pd.api.types.is_integer_dtype(col) and not (col.abs() >= 10**10).any():
        return None  # quantities: phone, ID and card numbers all have 11 digits or more
    values = _first_values(col, sample, lambda part: part.dropna()).astype(str)
    if values.empty:
        return None
    kinds = values.map(value_kind)
    top = kinds.value_counts()
    if top.empty:
        return None
    kind, count = top.index[0], int(top.iloc[0])
    return kind if count >= VALUE_SHARE * len(values) else None


def _first_values(col: pd.Series, sample: int, keep: Callable[[pd.Series], pd.Series]) -> pd.Series:
    """The first `sample` values that `keep` keeps, looking at as few rows as it takes (a growing
    head of the column) instead of filtering a whole 100k-row column for 500 values."""
    rows = 2 * sample
    while True:
        kept = keep(col.iloc[:rows])
        if len(kept) >= sample or rows >= len(col):
            return kept.head(sample)
        rows *= 8


def _stripped_texts(part: pd.Series) -> pd.Series:
    texts = part.dropna().astype(str).str.strip()
    return texts[texts != ""]


@overload
def mask_value(value: str, kind: str) -> str: ...
@overload
def mask_value(value: object, kind: str) -> str | None: ...
def mask_value(value: object, kind: str) -> str | None:
    """Mask one value so a person can still tell values apart but cannot read them."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    text = str(value)
    if kind == "phone":
        digits = re.sub(r"\D", "", text)
        return digits[:3] + "****" + digits[-4:] if len(digits) >= 7 else "*" * len(text)
    if kind == "email" and "@" in text:
        local, domain = text.split("@", 1)
        return f"{local[:1]}***@{domain}"
    if kind == "id_card":
        return text[:3] + "*" * max(0, len(text) - 7) + text[-4:] if len(text) > 7 else "*" * len(text)
    if kind == "bank_card":
        return text[:4] + "*" * max(0, len(text) - 8) + text[-4:] if len(text) > 8 else "*" * len(text)
    if kind == "name":
        return _mask_name(text)
    if kind == "address":
        return text[:3] + "****" if len(text) > 3 else "****"
    return "****"


def _mask_name(text: str) -> str:
    if any("\u4e00" <= c <= "\u9fff" for c in text):
        return text[:1] + "*" * max(1, len(text) - 1)  # 张三 -> 张*
    return " ".join(word[:1] + "***" for word in text.split()) or "***"


def mask_frame(df: pd.DataFrame, pii_map: dict[str, str]) -> pd.DataFrame:
    masked = df.copy()
    for column, kind in pii_map.items():
        if column in masked.columns:
            masked[column] = masked[column].map(lambda v, k=kind: mask_value(v, k)).astype(object)
    return masked


def detect_injection(df: pd.DataFrame, max_warnings: int = 10) -> list[str]:
    """Warn about column names or cells that read like instructions to the AI; they stay data."""
    warnings: list[str] = []
    for column in df.columns:
        if INJECTION.search(str(column)):
            warnings.append(warning("instruction_column", column=_short(column)))
    hits = 0
    for column in df.columns:
        col = df[column]
        if not (pd.api.types.is_object_dtype(col) or pd.api.types.is_string_dtype(col)):
            continue
        # Where the type inference kept the column's distinct values, they are searched instead of
        # every cell (the same answer: each cell is one of them); any hit has every cell searched.
        distinct = known_distinct(col)
        if distinct is not None and not _may_hold_instructions(distinct):
            continue
        texts = text_array(col)
        if distinct is None and not _may_hold_instructions(texts):
            continue
        rows = np.flatnonzero(_regex_hits(texts))
        for idx in rows:
            hits += 1
            if hits <= max_warnings:
                value = col.iat[idx]
                warnings.append(warning("instruction_cell", column=_short(column), row=idx + 1, text=_short(value)))
    if hits > max_warnings:
        warnings.append(warning("more_instruction_cells", count=hits - max_warnings))
    return warnings


def _may_hold_instructions(texts: pa.Array | pa.ChunkedArray) -> bool:
    """Whether any cell can read like an instruction: one RE2 search over the column's characters
    end to end (the Arrow buffer as it is, no copy), a few milliseconds for 100k cells against a
    search per cell. Cells run together there, so a match may span two of them (then every cell is
    searched, `_regex_hits`); the word boundary is left out of the pattern, since a following cell
    could hide it, so a cell that matches on its own always matches here too."""
    return any_cell_may_match(texts, _INJECTION_ANYWHERE)


def _regex_hits(texts: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Cells that read like instructions (RE2 through Arrow, in C++; Python's re if RE2 refuses)."""
    try:
        return regex_hits(texts, "(?i)" + INJECTION.pattern)
    except Exception:  # noqa: BLE001 - a pattern RE2 cannot take
        return np.fromiter((bool(v and INJECTION.search(v)) for v in texts.to_pylist()), dtype=bool, count=len(texts))


def _short(text, limit: int = 60) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
