"""Shared chart machinery for the plot tools: figures, fonts, style, labels, folding and saving.

Design notes:
- No pyplot: figures are `matplotlib.figure.Figure` objects drawn by `FigureCanvasAgg`, so no
  global backend is switched and no pyplot state is shared between (background) runs.
- No global rcParams either: the font family (Latin font first, a CJK font as fallback) is set on
  every text artist of a figure just before it is saved (`apply_fonts`), and on the tick-label
  defaults so ticks created later inherit it. DejaVu Sans comes first, so Latin text, digits and
  the Unicode minus render with it; Chinese characters fall back to the CJK font.
- The CJK font is the Noto Sans CJK SC shipped by the `mplfonts` package, registered once with
  the font manager; when it is missing, any installed CJK system font is used.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import logging
import math
import re
import threading
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Literal, cast

import numpy as np
import pandas as pd
from matplotlib import font_manager
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

log = logging.getLogger(__name__)

# ----------------------------------------------------------------------------- style

ACCENT = "#2E6FBA"  # the one accent colour (single-series charts)
ACCENT_DARK = "#1D4F8A"  # lines drawn over the accent (trendlines, medians)
MUTED = "#A7AFB9"  # "Other" and de-emphasised marks
TEXT = "#2B2F36"
GRID = "#E4E7EB"
SPINE = "#B8BEC6"
# Categorical palette starting from the accent (colour-blind friendly, muted).
PALETTE = ["#2E6FBA", "#E08A2E", "#3A9E6F", "#C9473F", "#8062B0", "#8C6A4F", "#D36BA6", "#5FA8B8", "#B8A63B", "#6B7A8F"]

DPI = 120
FIG_SIZE = (8.0, 5.0)
TITLE_SIZE = 13
LABEL_SIZE = 11
TICK_SIZE = 9.5
ANNOT_SIZE = 9

LATIN_FAMILY = "DejaVu Sans"

# ----------------------------------------------------------------------------- fonts

_FONT_LOCK = threading.Lock()
_MPLFONTS_FILES = ("NotoSansCJKsc-Regular.otf", "SourceHanSansSC-Regular.otf", "SimHei.ttf")
_SYSTEM_CJK_FAMILIES = (
    "Noto Sans CJK SC",
    "Noto Sans SC",
    "Source Han Sans SC",
    "Source Han Sans CN",
    "Noto Sans CJK JP",
    "Noto Sans CJK TC",
    "WenQuanYi Micro Hei",
    "WenQuanYi Zen Hei",
    "Microsoft YaHei",
    "SimHei",
    "PingFang SC",
    "Hiragino Sans GB",
    "Heiti SC",
    "STHeiti",
    "Droid Sans Fallback",
    "Arial Unicode MS",
)


def _mplfonts_file(name: str) -> Path | None:
    """The path of a font file shipped inside the installed `mplfonts` package, if any."""
    try:
        candidate = importlib.resources.files("mplfonts") / "fonts" / name
        path = Path(str(candidate))
        if path.is_file():
            return path
    except (ModuleNotFoundError, TypeError, OSError):
        pass
    try:  # a namespace or zipped install: look next to the module file
        import mplfonts

        path = Path(mplfonts.__file__).resolve().parent / "fonts" / name
        return path if path.is_file() else None
    except Exception:  # noqa: BLE001 - no mplfonts at all
        return None


@lru_cache(maxsize=1)
def cjk_font_name() -> str | None:
    """Register (once) and name a font that renders Chinese; None when there is none."""
    with _FONT_LOCK:
        for filename in _MPLFONTS_FILES:
            path = _mplfonts_file(filename)
            if path is None:
                continue
            try:
                font_manager.fontManager.addfont(str(path))
                return font_manager.FontProperties(fname=str(path)).get_name()
            except Exception as exc:  # noqa: BLE001 - a broken file: try the next one
                log.warning("could not register CJK font %s: %s", path, exc)
        installed = {f.name for f in font_manager.fontManager.ttflist}
        for family in _SYSTEM_CJK_FAMILIES:
            if family in installed:
                return family
    log.warning("no CJK font found: Chinese labels will not render")
    return None


def font_family() -> list[str]:
    """The font family list for chart text: Latin first, CJK as the per-glyph fallback."""
    cjk = cjk_font_name()
    return [LATIN_FAMILY, cjk] if cjk else [LATIN_FAMILY]


def apply_fonts(fig: Figure) -> None:
    """Give every text of the figure the Latin+CJK family (no global rcParams are touched)."""
    family = font_family()
    for ax in fig.axes:
        ax.tick_params(axis="both", which="both", labelfontfamily=family)
    for text in fig.findobj(Text):
        text.set_fontfamily(family)


# ----------------------------------------------------------------------------- figures


def new_figure(size: tuple[float, float] = FIG_SIZE) -> tuple[Figure, Axes]:
    """A styled figure with one axes, drawn by Agg (no pyplot)."""
    fig = Figure(figsize=size, dpi=DPI, facecolor="white", layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    style_axes(ax)
    return fig, ax


def style_axes(ax: Axes, grid_axis: str = "y") -> None:
    """Light, consistent styling: no top/right spines, a faint grid behind the data."""
    ax.set_facecolor("white")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_color(SPINE)
    ax.tick_params(colors=TEXT, labelsize=TICK_SIZE, length=3, color=SPINE)
    ax.set_axisbelow(True)
    set_grid(ax, grid_axis)


def set_grid(ax: Axes, grid_axis: str) -> None:
    ax.grid(False)
    if grid_axis in ("x", "y", "both"):
        ax.grid(True, axis=cast(Literal["x", "y", "both"], grid_axis), color=GRID, linewidth=0.8)


def set_labels(
    ax: Axes, title: str | None = None, xlabel: str | None = None, ylabel: str | None = None, ylabel_width: int = 40
) -> None:
    if title:
        ax.set_title(wrap_label(title, width=54, max_lines=2), fontsize=TITLE_SIZE, color=TEXT, pad=10, loc="left")
    if xlabel is not None:
        ax.set_xlabel(wrap_label(xlabel, width=60, max_lines=1), fontsize=LABEL_SIZE, color=TEXT)
    if ylabel is not None:
        ax.set_ylabel(wrap_label(ylabel, width=ylabel_width, max_lines=1), fontsize=LABEL_SIZE, color=TEXT)


def style_legend(ax: Axes, title: str | None = None, **kwargs) -> None:
    legend = ax.legend(
        title=wrap_label(title, 24, 1) if title else None,
        fontsize=TICK_SIZE,
        title_fontsize=TICK_SIZE,
        frameon=False,
        **kwargs,
    )
    if legend is not None and legend.get_title() is not None:
        legend.get_title().set_color(TEXT)


def pad_value_limits(ax: Axes, values: list[float], axis: str) -> None:
    """Leave room beyond the bars for their value labels (both signs)."""
    low, high = min(0.0, min(values)), max(0.0, max(values))
    span = (high - low) or 1.0
    limits = (low - 0.12 * span if low < 0 else 0.0, high + 0.12 * span if high > 0 else 0.0)
    (ax.set_xlim if axis == "x" else ax.set_ylim)(*limits)


def save(fig: Figure, path: str | Path, dpi: int = DPI) -> Path:
    """Write the figure as PNG and release it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    apply_fonts(fig)
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    fig.savefig(path, format="png", dpi=dpi, facecolor="white")
    fig.clear()
    return path


# ----------------------------------------------------------------------------- labels


def char_width(ch: str) -> int:
    """Display width of a character: 2 for wide (CJK) characters, else 1."""
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def text_width(text: str) -> int:
    return sum(char_width(ch) for ch in text)


def escape_mathtext(text: str) -> str:
    """Data-derived text must never be parsed as mathtext ("$5 to $10")."""
    return text.replace("$", r"\$")


def wrap_label(value: object, width: int = 18, max_lines: int = 2) -> str:
    """Wrap a label to `width` display columns (CJK counts double), at most `max_lines` lines,
    truncated with an ellipsis. Mathtext is escaped."""
    text = re.sub(r"\s+", " ", str(value)).strip()
    # tokens: runs of non-space non-wide characters (words) and single wide characters
    tokens = re.findall(r"[^\s\u1100-\uFFEF]+|[\u1100-\uFFEF]| ", text) or [text]
    lines: list[str] = []
    current = ""
    for token in tokens:
        if token == " ":
            if current:
                current += " "
            continue
        if text_width(current + token) <= width:
            current += token
            continue
        if current.strip():
            lines.append(current.rstrip())
            current = ""
        while text_width(token) > width:  # a single over-long word: hard-split
            cut, used = 0, 0
            for i, ch in enumerate(token):
                if used + char_width(ch) > width:
                    cut = i
                    break
                used += char_width(ch)
            cut = max(cut, 1)
            lines.append(token[:cut])
            token = token[cut:]
        current = token
    if current.strip():
        lines.append(current.rstrip())
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        last = lines[-1]
        while last and text_width(last) + 1 > width:
            last = last[:-1]
        lines[-1] = last.rstrip() + "…"
    return escape_mathtext("\n".join(lines))


def category_label(value: object, zh: bool = False) -> str:
    """A readable string for a category value (2020.0 -> "2020", "" -> "(blank)")."""
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, pd.Timestamp):
        return value.strftime("%Y-%m-%d") if value == value.normalize() else str(value)
    text = str(value)
    if not text.strip():
        return "（空白）" if zh else "(blank)"
    return text


def fmt_num(value: float) -> str:
    """A short human-readable number (thousands separators, few decimals)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    value = float(value)
    if value.is_integer() and abs(value) < 1e15:
        return f"{value:,.0f}"
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude >= 100:
        return f"{value:,.1f}"
    if magnitude >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def short_label(label: str, limit: int = 60) -> str:
    """A category name short enough for model-facing text."""
    return label if len(label) <= limit else label[: limit - 1] + "…"


def slug(text: str, limit: int = 40) -> str:
    """An ASCII file-name fragment; non-ASCII names get a short stable hash."""
    ascii_part = re.sub(r"[^A-Za-z0-9]+", "_", str(text)).strip("_")[:limit]
    if ascii_part and ascii_part.isascii() and text.isascii():
        return ascii_part
    digest = hashlib.md5(str(text).encode("utf-8")).hexdigest()[:8]
    return f"{ascii_part}_{digest}" if ascii_part else f"col_{digest}"


# ----------------------------------------------------------------------------- categories


def other_label(n_folded: int, zh: bool) -> str:
    """The label of the folded bucket, naming how many categories it holds."""
    return f"其他（{n_folded} 类）" if zh else f"Other ({n_folded} more)"


def top_categories(ranking: pd.Series, top: int) -> tuple[list, list]:
    """Split ranked categories (index, sorted by importance) into the kept top-N and the rest.

    Folding a single category into "Other" saves nothing, so N+1 categories are all kept."""
    keys = list(ranking.index)
    if len(keys) <= top + 1:
        return keys, []
    return keys[:top], keys[top:]


def fold_categories(labels: pd.Series, keep: Iterable, other: str, zh: bool = False) -> pd.Series:
    """Map every value not in `keep` to `other` (returns a new string Series)."""
    keep_set = set(keep)
    return labels.map(lambda v: category_label(v, zh) if v in keep_set else other).astype(object)


def palette(n: int, muted_last: bool = False) -> list[str]:
    """n series colours; `muted_last` greys out the final one (the folded "Other" bucket)."""
    colors = [PALETTE[i % len(PALETTE)] for i in range(n)]
    if muted_last and colors:
        colors[-1] = MUTED
    return colors


def group_labels(
    data: pd.DataFrame, group_column: str, index: pd.Index, max_groups: int, zh: bool
) -> tuple[pd.Series, list[str], int]:
    """Group labels for the rows in `index`: the largest groups, the rest folded into Other.
    Missing groups are dropped. Returns (labels, ordered group names, number folded)."""
    groups = data.loc[index, group_column]
    groups = groups[groups.notna()]
    keep, rest = top_categories(groups.value_counts(), max_groups)
    other = other_label(len(rest), zh)
    labels = fold_categories(groups, keep, other, zh)
    order = [category_label(k, zh) for k in keep] + ([other] if rest else [])
    return labels, order, len(rest)


def unique_index(data: pd.DataFrame) -> pd.DataFrame:
    """Row-aligned work needs unique row labels; a renumbered view when they repeat (no mutation)."""
    return data if data.index.is_unique else data.reset_index(drop=True)


def is_numeric(series: pd.Series) -> bool:
    """Numbers a chart can measure (not booleans, not dates)."""
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def numeric_values(series: pd.Series) -> pd.Series:
    """Finite float values, missing and infinite dropped (a new Series)."""
    values = pd.to_numeric(series, errors="coerce").astype(float)
    return values[np.isfinite(values)]


def mostly_numeric_text(series: pd.Series, threshold: float = 0.9) -> bool:
    """True when a text column holds numbers stored as text (then convert_types helps)."""
    sample = series.dropna().astype(str).head(2000)
    if sample.empty:
        return False
    cleaned = sample.str.replace(r"[,\s%¥$€£元]", "", regex=True)
    return pd.to_numeric(cleaned, errors="coerce").notna().mean() >= threshold
