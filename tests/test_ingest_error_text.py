"""A file Verity cannot read is explained in the reader's language: every IngestError carries its
detail (sizes, limits, sheet names) and hint in Chinese beside the English, the Chinese page shows them
with no English sentence, the English page and the API's English fields stay as they were, an error
stored before the Chinese text existed still shows (in English), and the CLI prints Chinese with zh."""

from __future__ import annotations

import ast
import html
import pickle
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from markupsafe import escape
from sqlalchemy import select

from app.config import Settings
from app.db.models import Dataset
from app.ingest.errors import IngestError
from app.main import create_app
from app.web.i18n import t
from tests.test_web import new_workspace

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "data" / "corpus"
ENCRYPTED = CORPUS / "calamine" / "pass_protected.xlsx"
CORRUPT = CORPUS / "calamine" / "issue252.xlsx"
CJK = re.compile(r"[\u4e00-\u9fff]")
ENGLISH_WORDS = re.compile(r"[A-Za-z]{2,}[ ,;:]+[A-Za-z]{2,}")  # two English words in a row: a sentence


# --- every construction passes Chinese text (the source, read as a tree) ----------------------------------


def _chinese(node: ast.expr) -> bool:
    """A Chinese text: a literal (or f-string, or either branch of a conditional) with Chinese characters,
    or a name that says it holds the Chinese text (`HINT_ZH`, a `message_zh` parameter)."""
    if isinstance(node, ast.Name):
        return node.id.lower().endswith("_zh")
    if isinstance(node, ast.Attribute):  # passed on from another file error (`exc.message_zh`)
        return node.attr.lower().endswith("_zh")
    if isinstance(node, ast.IfExp):
        return _chinese(node.body) and _chinese(node.orelse)
    return any(
        isinstance(part, ast.Constant) and isinstance(part.value, str) and CJK.search(part.value)
        for part in ast.walk(node)
    )


def _empty(node: ast.expr | None) -> bool:
    return node is None or (isinstance(node, ast.Constant) and node.value == "")


def untranslated(source: str, name: str = "<source>") -> list[str]:
    """`IngestError(...)` constructions whose message (or non-empty hint) has no Chinese beside it."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("IngestError", "KnowledgeError")
        ):  # a note's or document's error too
            continue
        keywords = {k.arg: k.value for k in node.keywords}
        fields = dict(zip(("category", "message", "hint", "message_zh", "hint_zh"), node.args)) | keywords
        message_zh, hint_zh = fields.get("message_zh"), fields.get("hint_zh")
        if (
            message_zh is None
            or not _chinese(message_zh)
            or (not _empty(fields.get("hint")) and (hint_zh is None or not _chinese(hint_zh)))
        ):
            found.append(f"{name}:{node.lineno}")
    return found


def test_the_check_finds_a_construction_without_chinese():
    source = """
IngestError("corrupt_file", "Damaged.", "Save again.", "文件已损坏。", "请重新保存。")
IngestError("corrupt_file", "Damaged.", "Save again.")
IngestError("corrupt_file", "Damaged.", "Save again.", "文件已损坏。")
IngestError("corrupt_file", "Damaged.", "", message_zh="Damaged again.")
IngestError("corrupt_file", f"{n} parts.", "", f"{n} 个部件。")
"""
    assert untranslated(source) == ["<source>:3", "<source>:4", "<source>:5"]


def test_every_ingest_error_in_the_app_passes_chinese_text():
    sites, missing = 0, []
    for path in sorted((REPO / "app").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        sites += len(re.findall(r"\b(?:Ingest|Knowledge)Error\(", text)) - len(re.findall(r"class \w+Error\(", text))
        missing += untranslated(text, str(path.relative_to(REPO)))
    assert sites >= 38, (
        sites
    )  # 34 for data files, the rest for notes and documents  # the scan sees the raise sites (errors.py's class statement aside)
    assert missing == []


# --- the error object ----------------------------------------------------------------------------------


def test_the_chinese_text_survives_pickling_and_is_stored():
    error = IngestError(
        "too_large",
        "The workbook holds 12,000 parts.",
        "Save it again from Excel.",
        "这个工作簿内部由 12,000 个部件组成，数量太多了。",
        "请用 Excel 重新保存一份。",
    )
    back = pickle.loads(pickle.dumps(error))
    assert (back.category, back.message, back.hint, back.message_zh, back.hint_zh) == (
        error.category,
        error.message,
        error.hint,
        error.message_zh,
        error.hint_zh,
    )
    assert back.as_dict() == {
        "category": "too_large",
        "message": "The workbook holds 12,000 parts.",
        "hint": "Save it again from Excel.",
        "message_zh": "这个工作簿内部由 12,000 个部件组成，数量太多了。",
        "hint_zh": "请用 Excel 重新保存一份。",
    }
    assert back.message_in("zh") == error.message_zh and back.message_in("en") == error.message
    old = IngestError("corrupt_file", "Damaged.", "Save again.")  # no Chinese: English in both languages
    assert old.message_in("zh") == "Damaged." and old.hint_in("zh") == "Save again."


def test_the_reading_child_process_hands_back_the_chinese_text(tmp_path):
    from app.ingest.bounded import load_table_bounded

    settings = Settings(_env_file=None, data_dir=tmp_path)
    with pytest.raises(IngestError) as caught:
        load_table_bounded(ENCRYPTED, settings=settings)
    assert caught.value.category == "encrypted_file"
    assert CJK.search(caught.value.message_zh) and CJK.search(caught.value.hint_zh)


@pytest.mark.parametrize("sheet", ["Nope", None])
def test_sheet_names_are_kept_in_the_chinese_message(tmp_path, sheet):
    from openpyxl import Workbook

    from app.ingest.pipeline import load_table

    book = Workbook()
    book.active.title = "销售"
    book.create_sheet("Notes")
    path = tmp_path / "empty.xlsx"
    book.save(path)
    with pytest.raises(IngestError) as caught:
        load_table(path, sheet=sheet, settings=Settings(_env_file=None, data_dir=tmp_path))
    assert caught.value.category == "no_table_found"
    assert caught.value.hint_zh == "这个文件里的工作表：“销售”、“Notes”。"
    assert caught.value.hint == "Sheets in this file: '销售', 'Notes'."
    if sheet:
        assert caught.value.message_zh == "empty.xlsx 里没有名为“Nope”的工作表。"


# --- the pages and the API ------------------------------------------------------------------------------


def alert(page: str) -> str:
    """The text of the page's error box, without tags."""
    box = re.search(r'role="alert"[^>]*>(.*?)</div>', page, re.S)
    assert box, page[:2000]
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", box.group(1))).strip())


def bad_files(tmp_path: Path) -> list[tuple[str, bytes, dict]]:
    """(file name, content, settings) for an encrypted, a damaged and a too-large upload."""
    files = [("locked.xlsx", ENCRYPTED.read_bytes(), {}), ("broken.xlsx", CORRUPT.read_bytes(), {})]
    return files + [("big.csv", b"Region,Revenue\n" + b"East,1\n" * 1000, {"max_upload_mb": 0})]


@pytest.mark.parametrize("which", [0, 1, 2], ids=["encrypted", "corrupt", "too_large"])
def test_a_bad_upload_is_explained_in_chinese_on_the_chinese_page(tmp_path, which):
    name, content, overrides = bad_files(tmp_path)[which]
    settings = Settings(_env_file=None, data_dir=tmp_path, llm_model="builtin", **overrides)
    with TestClient(create_app(settings)) as client:
        ws = new_workspace(client)
        api = client.post(f"/api/workspaces/{ws}/files", files={"file": (name, content)}).json()["error"]
        zh = client.post(f"/workspaces/{ws}/upload?lang=zh", files={"file": (name, content)})
        en = client.post(f"/workspaces/{ws}/upload?lang=en", files={"file": (name, content)})
    # the API: English message and hint as before, the Chinese beside them
    assert api["category"] in ("encrypted_file", "corrupt_file", "too_large")
    assert not CJK.search(api["message"] + api.get("hint", "")) and CJK.search(api["message_zh"])
    assert CJK.search(api["hint_zh"])
    # the Chinese page: the headline, the detail and the hint, all in Chinese
    box = alert(zh.text)
    assert zh.status_code in (400, 413, 415)
    assert t("file_error_head_" + api["category"], "zh", file=name) in box
    assert str(escape(api["message_zh"])) in zh.text and str(escape(api["hint_zh"])) in zh.text
    assert api["message"] not in box and api["hint"] not in box and 'lang="en"' not in zh.text.split('role="alert"')[1]
    assert ENGLISH_WORDS.findall(box.replace(name, "")) == []
    # the English page as before: the file and the reader's message first, then the hint; no Chinese
    english = alert(en.text)
    assert english.startswith(f"{name}: {api['message']}") and api["hint"] in english
    assert not CJK.search(english)


def test_an_error_stored_before_the_chinese_text_shows_in_english(client):
    ws = new_workspace(client)
    client.post(f"/api/workspaces/{ws}/files", files={"file": ("s.csv", b"Region,Revenue\nEast,1\nWest,2\n")})
    old = {
        "category": "corrupt_file",
        "message": "The file is damaged or uses a structure Verity cannot read.",
        "hint": "Open it in Excel or LibreOffice and save it again.",
    }
    with client.app.state.db.session() as session:
        dataset = session.scalars(select(Dataset).where(Dataset.workspace_id == ws)).one()
        dataset.info = {**(dataset.info or {}), "status": "failed", "error": old}
    zh = client.get(f"/workspaces/{ws}?lang=zh").text
    assert f'<p lang="en" data-error-message>{escape(old["message"])}</p>' in zh
    assert t("file_error_head_corrupt_file", "zh", file="s.csv") in zh and old["hint"] not in zh
    en = client.get(f"/workspaces/{ws}?lang=en").text
    assert f"s.csv: {escape(old['message'])}" in en and str(escape(old["hint"])) in en


# --- the command line ----------------------------------------------------------------------------------


def test_inspect_prints_the_error_in_the_chosen_language(capsys, monkeypatch):
    from app.cli import main
    from app.config import get_settings

    monkeypatch.delenv("VERITY_LANG", raising=False)
    get_settings.cache_clear()
    assert main(["inspect", str(ENCRYPTED), "--lang", "zh"]) == 2
    zh = capsys.readouterr().err
    assert zh.startswith("error: encrypted_file: ") and "这个工作簿设置了密码保护" in zh and "hint: 请在 Excel" in zh
    assert main(["inspect", str(ENCRYPTED)]) == 2  # VERITY_LANG unset: English, as before
    en = capsys.readouterr().err
    assert en.startswith("error: encrypted_file: The workbook is protected") and not CJK.search(en)
    monkeypatch.setenv("VERITY_LANG", "zh")
    get_settings.cache_clear()
    assert main(["inspect", str(ENCRYPTED)]) == 2
    assert "这个工作簿设置了密码保护" in capsys.readouterr().err


def test_analyze_names_a_missing_file_in_chinese(tmp_path, capsys, monkeypatch):
    from app.cli import main

    monkeypatch.setenv("VERITY_DATA_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("VERITY_LLM_MODEL", "builtin")
    from app.config import get_settings

    get_settings.cache_clear()
    missing = tmp_path / "nowhere.xlsx"
    assert main(["analyze", str(missing), "--lang", "zh", "--no-input", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: empty_file: 找不到文件：") and "hint: 请检查文件路径。" in err
