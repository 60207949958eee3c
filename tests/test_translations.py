"""One translation catalog (app/translations.py) for the pages and the reports: no key twice, both
languages everywhere with the same placeholders, no other module keeping translations of its own, and
every analysis step named in Chinese on the Chinese pages."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CATALOG_FILE = REPO / "app" / "translations.py"
CJK = re.compile(r"[\u4e00-\u9fff]")


def duplicate_keys(source: str, name: str = "CATALOG") -> list[str]:
    """Keys written more than once in the dict literal `name` (Python keeps the last one silently)."""
    for node in ast.parse(source).body:
        target = (
            node.target
            if isinstance(node, ast.AnnAssign)
            else (node.targets[0] if isinstance(node, ast.Assign) else None)
        )
        if isinstance(target, ast.Name) and target.id == name and isinstance(node.value, ast.Dict):
            keys = Counter(k.value for k in node.value.keys if isinstance(k, ast.Constant))
            return sorted(k for k, n in keys.items() if n > 1)
    raise AssertionError(f"no dict literal named {name}")


def test_the_duplicate_check_finds_a_key_written_twice():
    source = 'CATALOG = {"back_to_run": {"en": "a", "zh": "b"}, "x": {}, "back_to_run": {"en": "c", "zh": "d"}}'
    assert duplicate_keys(source) == ["back_to_run"]


def test_the_catalog_has_each_key_once_in_both_languages():
    from app.translations import CATALOG

    assert duplicate_keys(CATALOG_FILE.read_text(encoding="utf-8")) == []
    for key, entry in CATALOG.items():
        assert set(entry) == {"en", "zh"} and entry["en"].strip() and entry["zh"].strip(), key
        assert set(re.findall(r"\{(\w+)\}", entry["en"])) == set(re.findall(r"\{(\w+)\}", entry["zh"])), key


def test_pages_and_reports_keep_no_translations_of_their_own():
    """A dict literal with both "en" and "zh" keys outside the catalog is a second catalog."""
    offenders = []
    for folder in ("app/web", "app/reports"):
        for path in sorted((REPO / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Dict):
                    keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
                    if {"en", "zh"} <= keys:
                        offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert offenders == []


def test_every_analysis_step_has_a_chinese_name():
    from analysis_tools import REGISTRY
    from app.web.i18n import TOOL_LABELS, tool_label

    tools = set(REGISTRY.names() if hasattr(REGISTRY, "names") else REGISTRY) | {"run_python"}
    missing = sorted(tools - set(TOOL_LABELS))
    assert missing == []
    for name in tools:
        assert CJK.search(tool_label(name, "zh")) and "_" not in tool_label(name, "zh"), name


def test_the_reader_s_cleaning_steps_read_in_chinese():
    """Every fixed cleaning step the reader logs (app/ingest) has a Chinese wording; a value read as
    missing is quoted in it."""
    from app.web.i18n import cleaning_text

    logged = set()
    for path in sorted((REPO / "app" / "ingest").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        logged |= set(re.findall(r'Step\(\s*"([^"{]+)"', text))
        logged |= set(re.findall(r'"action":\s*"([^"{]+)"', text))
        logged |= set(re.findall(r'leftover\([^)]*?"([^"]+ read as missing)"', text))
    assert len(logged) >= 12, logged
    for action in logged:
        assert CJK.search(cleaning_text(action, "zh")), action
        assert cleaning_text(action, "en") == action
    assert cleaning_text("read '—' as missing", "zh") == "把“—”读作缺失值"
    assert cleaning_text("some new step", "zh") == "some new step"
