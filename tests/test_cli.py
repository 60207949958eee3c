"""`verity analyze` and `verity inspect` as a user runs them (a subprocess, real files)."""

import json
import logging
import os
import re
import subprocess
import sys
import time

import pytest

from tests.factories import SAMPLES

SALES = SAMPLES / "retail_sales.xlsx"


def verity(*args, tmp_path, check=False):
    env = {**os.environ, "VERITY_DATA_DIR": str(tmp_path / "runtime"), "VERITY_LLM_MODEL": "builtin"}
    env.pop("VERITY_LLM_API_KEY", None)
    env.pop("OPENAI_API_KEY", None)
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=check,
    )


@pytest.fixture(scope="module")
def english_report(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("analyze-en")
    out = tmp_path / "report"
    done = verity("analyze", SALES, "--question", "Does revenue differ by region?", "--out", out, tmp_path=tmp_path)
    return done, out


def test_analyze_writes_the_contract_report(english_report):
    done, out = english_report
    assert done.returncode == 0, done.stderr
    for name in ("report.html", "report.md", "report.json", "report.pdf", "report.docx", "analysis.py"):
        assert (out / name).stat().st_size > 0, name
    report = json.loads((out / "report.json").read_text())
    assert report["language"] == "en" and report["model"] == {"kind": "builtin", "name": "builtin"}
    assert len(report["evidence"]) >= 3
    for item in report["evidence"]:
        assert item["method"] and item["metrics"] and item["sample_size"] == 1200
        assert item["tool_call_ids"] and item["confidence"] in ("high", "medium", "low")
    # every region's revenue is highly skewed (data/eval/expected.py asserts it), so 'auto' compares ranks
    comparison = next(e for e in report["evidence"] if e["metrics"].get("method") == "kruskal")
    assert comparison["metrics"]["p_value"] < 0.001
    assert report["figures"] and all((out / f["path"]).exists() and f["caption"] for f in report["figures"])
    assert "Region" in report["answer"] and "East" in report["answer"]
    assert report["datasets"][0]["rows"] == 1200
    assert all(t["status"] == "completed" for t in report["tasks"])


def test_analyze_runs_analysis_py_before_saying_it_reproduced(english_report):
    """The report says "Reproduced by analysis.py" because the script ran and every number matched."""
    done, out = english_report
    report = json.loads((out / "report.json").read_text())
    check = report["reproduction"]
    assert check["status"] == "passed" and check["differing"] == 0 and check["matched"] >= 20
    transcript = (out / "analysis_output.txt").read_text(encoding="utf-8")
    assert transcript.count("  ✓  E") == check["matched"] and "  ✗  " not in transcript
    assert "Reproduced by analysis.py" in (out / "report.md").read_text(encoding="utf-8")
    assert 'id="reproduction"' in (out / "report.html").read_text(encoding="utf-8")


def test_html_report_is_self_contained(english_report):
    html = (english_report[1] / "report.html").read_text()
    assert "data:image/png;base64," in html and 'src="http' not in html and 'src="/' not in html


def test_chinese_question_gets_a_chinese_report(tmp_path):
    out = tmp_path / "report"
    done = verity("analyze", SALES, "--question", "不同地区的收入有差异吗？", "--out", out, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["language"] == "zh"
    assert len(re.findall(r"[\u4e00-\u9fff]", report["answer"])) > 30
    assert "内置分析器" in report["answer"]


def test_an_english_question_on_another_sheet_is_answered_there_in_english(tmp_path):
    """A new user's trial: "What is the total 销售额 of 西门 in sheet 二店?" on a book of a sheet per shop.
    The question's own words decide its language, not the Chinese column and value names in it (the CLI
    answered in Chinese); the analyst turns to the sheet it names, and analysis.py reproduces the answer
    there."""
    import pandas as pd

    sheets = {
        name: pd.DataFrame(
            {"门店": ["东门", "西门", "南门"] * 4, "销售额": [(i * 37 + k * 11) % 90 + 10 for i in range(12)]}
        )
        for k, name in enumerate(("一店", "二店"))
    }
    book = tmp_path / "shops.xlsx"
    with pd.ExcelWriter(book) as writer:
        for name, frame in sheets.items():
            frame.to_excel(writer, sheet_name=name, index=False)
    west = sheets["二店"].loc[sheets["二店"]["门店"] == "西门", "销售额"].sum()
    out = tmp_path / "report"
    question = "What is the total 销售额 of 西门 in sheet 二店?"
    done = verity("analyze", book, "--question", question, "--out", out, "--no-input", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    assert report["language"] == "en" and report["answer"].startswith("Read as: on sheet 二店,"), report["answer"]
    assert f"{west:,}" in report["answer"].split("\n\n")[1]
    assert report["reproduction"]["status"] == "passed" and report["reproduction"]["differing"] == 0


def test_bad_input_exits_2_with_a_category(tmp_path):
    fake = tmp_path / "photo.xlsx"
    fake.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 100)
    done = verity("analyze", fake, "--question", "x", "--out", tmp_path / "r", tmp_path=tmp_path)
    assert done.returncode == 2
    assert re.match(r"error: (unsupported_format|corrupt_file): ", done.stderr)
    assert "Traceback" not in done.stderr


def test_a_question_given_where_a_file_goes_is_pointed_to_question(tmp_path):
    done = verity("analyze", SALES, "Which region sold most?", "--out", tmp_path / "r", tmp_path=tmp_path)
    assert done.returncode == 2 and "File not found" in done.stderr and "--question" in done.stderr
    missing = verity("analyze", tmp_path / "nowhere.csv", "--question", "x", tmp_path=tmp_path)
    assert missing.returncode == 2 and "--question" not in missing.stderr  # a missing file is just missing


def test_a_harness_failure_is_one_plain_line_and_the_details_go_to_the_log(tmp_path, monkeypatch, capsys):
    from app import cli
    from app.runs import RunService

    def broken(*_args, **_kwargs):
        raise RuntimeError("a bug in the harness")

    monkeypatch.setenv("VERITY_DATA_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("VERITY_LLM_MODEL", "builtin")
    monkeypatch.setattr(RunService, "prepare_turn", broken)
    monkeypatch.setattr(logging.root, "handlers", list(logging.root.handlers))  # the CLI replaces them
    code = cli.main(
        [
            "analyze",
            str(SALES),
            "--question",
            "Does revenue differ by region?",
            "--no-input",
            "--out",
            str(tmp_path / "report"),
        ]
    )
    for handler in logging.root.handlers:
        handler.close()
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert "error: run_failed: The analysis stopped unexpectedly" in err
    log_file = tmp_path / "runtime" / "verity.log"
    assert f"details: {log_file}" in err
    assert "Traceback" in log_file.read_text() and "a bug in the harness" in log_file.read_text()


def test_analyze_loads_the_pdf_fonts_while_it_waits_for_the_check(tmp_path, monkeypatch, capsys):
    """The check runs in another process: the CLI loads the PDF's fonts meanwhile (the report files are
    written once the check's verdict is in), not after it. The check below waits for the fonts: it would
    wait in vain if they were loaded only when the PDF is written."""
    from app import cli
    from app.reports import pdf_fonts, reproduce

    seen: list[bool] = []

    def check(*_args, **_kwargs):
        deadline = time.monotonic() + 120
        while pdf_fonts._PDF_GLYPHS is None and time.monotonic() < deadline:
            time.sleep(0.02)
        seen.append(pdf_fonts._PDF_GLYPHS is not None and pdf_fonts._PDF_FONT is not None)
        return reproduce.Outcome(None, "no_sandbox")

    sheet = tmp_path / "sales.csv"
    sheet.write_text(
        "Region,Revenue\n" + "".join(f"{'North South East'.split()[i % 3]},{10 + i % 7}\n" for i in range(60))
    )
    monkeypatch.setenv("VERITY_DATA_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("VERITY_LLM_MODEL", "builtin")
    monkeypatch.setattr(pdf_fonts, "_PDF_FONT", None)
    monkeypatch.setattr(pdf_fonts, "_PDF_GLYPHS", None)
    monkeypatch.setattr(reproduce, "start_early_check", lambda *_args, **_kwargs: None)
    monkeypatch.setattr(reproduce, "check_analysis_script", check)
    monkeypatch.setattr(logging.root, "handlers", list(logging.root.handlers))  # the CLI replaces them
    out = tmp_path / "report"
    code = cli.main(
        ["analyze", str(sheet), "--question", "Does revenue differ by region?", "--no-input", "--out", str(out)]
    )
    for handler in logging.root.handlers:
        handler.close()
    assert code == 0, capsys.readouterr().err
    assert seen == [True]
    assert (out / "report.pdf").stat().st_size > 0


def test_inspect_json_follows_the_contract(tmp_path):
    done = verity("inspect", SALES, "--json", "--rows", "5", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    assert {
        "file",
        "format",
        "sheets",
        "selected_sheet",
        "header_row",
        "rows",
        "columns",
        "cleaning",
        "warnings",
        "preview",
    } <= set(info)
    assert info["header_row"] == 3 and info["rows"] == 1200 and len(info["preview"]) == 5
    types = {c["name"]: c["type"] for c in info["columns"]}
    assert types["Revenue"] == "number" and types["Date"] == "datetime" and types["Region"] == "category"
    assert re.match(r"\d{4}-\d{2}-\d{2}", info["preview"][0]["Date"])


def test_inspect_text_lists_exact_duplicate_rows(tmp_path):
    """A step about whole rows names no column (it crashed the text output: issue 28)."""
    sheet = tmp_path / "repeats.csv"
    sheet.write_text("a,b\n1,2\n1,2\n3,4\n1,2\n")
    done = verity("inspect", sheet, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Rows that repeat an earlier row exactly (kept) (2 rows)" in done.stdout


def test_inspect_names_a_missing_file_not_found(tmp_path):
    done = verity("inspect", tmp_path / "no-such-sheet.csv", tmp_path=tmp_path)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "error: file_not_found: The file 'no-such-sheet.csv' could not be found." in done.stderr


# ---------------------------------------------------------------- start-up cost (issue #17)
# What a command imports decides how long it takes to start (bench/startup.py has the times):
# these fail when an import edge brings the heavy stacks back.

HEAVY = (
    "pandas",
    "numpy",
    "pydantic",
    "sqlalchemy",
    "fastapi",
    "scipy",
    "matplotlib",
    "statsmodels",
    "sklearn",
    "openai",
    "analysis_tools",
)
TOOL_STACKS = (
    "scipy",
    "matplotlib",
    "statsmodels",
    "sklearn",
    "sqlalchemy",
    "fastapi",
    "openai",
    "app.agent",
    "app.web",
    "app.db",
    "analysis_tools.stats",
    "analysis_tools.plot_comparison",
    "analysis_tools.plot_distribution",
    "analysis_tools.plot_relationship",
)


def loaded_after(code: str) -> set[str]:
    """The top-level packages (and app/analysis_tools modules) a fresh interpreter holds after `code`."""
    return loaded_after_each(code)[0]


def loaded_after_each(*pieces: str) -> list[set[str]]:
    """What one fresh interpreter holds after each piece of code, run one after the other (a later
    piece starts with what the earlier ones loaded, so what it is found without, it loads nothing of)."""
    probe = "import json, sys\n" + "".join(
        f"{code}\nprint(json.dumps(sorted(sys.modules)), flush=True)\n" for code in pieces
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=300)
    held = [set(json.loads(line)) for line in out.stdout.strip().splitlines() if line.startswith('["')]
    assert len(held) == len(pieces), out.stdout
    return held


def has_any(modules: set[str], names) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


def test_help_loads_nothing_heavy():
    modules = loaded_after("from app.cli import build_parser\nbuild_parser().format_help()")
    assert has_any(modules, HEAVY) == []


def test_reading_a_file_does_not_load_the_tools_or_the_web_app(tmp_path):
    # `verity inspect` reads in a child process that imports the readers itself, while its early
    # parse runs (app.ingest.early_parse): the command's own process imports no data stack at all ...
    # ... and what the child runs loads the readers, never the tools or the web app. One interpreter
    # runs both, the command first: its modules are looked at before the reader's code has run there.
    command, reader = loaded_after_each(
        f"from app.cli import main\nmain(['inspect', {str(SALES)!r}, '--json'])",
        f"from app.ingest.pipeline import inspect_file\ninspect_file({str(SALES)!r})",
    )
    assert "app.ingest.bounded" in command
    assert has_any(command, ("pandas", "numpy", "pyarrow", "fastexcel", "app.ingest.pipeline", *TOOL_STACKS)) == []
    assert "pandas" in reader and has_any(reader, TOOL_STACKS) == []


def test_the_tool_registry_is_built_on_first_use():
    imported, used = loaded_after_each(
        "import analysis_tools\nfrom analysis_tools import ToolContext, ToolResult",
        "from analysis_tools import REGISTRY\nassert REGISTRY.get('compare_groups')",
    )
    assert has_any(imported, ("scipy", "matplotlib", "analysis_tools.stats")) == []
    assert {"scipy", "analysis_tools.stats", "analysis_tools.plot_comparison"} <= used


# ---------------------------------------------------------------- deployment (issue #17)


def test_migrate_brings_an_empty_database_to_the_newest_schema(tmp_path):
    done = verity("migrate", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "schema is up to date" in done.stdout
    import sqlite3

    tables = {
        r[0]
        for r in sqlite3.connect(tmp_path / "runtime" / "verity.db").execute(
            "SELECT name FROM sqlite_master WHERE type='table'"
        )
    }
    assert {"alembic_version", "workspaces", "runs", "events"} <= tables


def test_start_says_plainly_when_run_python_cannot_be_offered(monkeypatch, settings):
    import sandbox.host
    from app.cli import sandbox_status

    monkeypatch.setattr(
        sandbox.host, "probe", lambda kind: sandbox.host.Isolation(kind, False, "setting up uid map: Permission denied")
    )
    line = sandbox_status(settings)
    assert line.startswith("run_python cannot be offered here") and "Permission denied" in line
    assert "README" in line and "Traceback" not in line
    monkeypatch.setattr(sandbox.host, "probe", lambda kind: sandbox.host.Isolation(kind, True, ""))
    assert sandbox_status(settings) == "run_python: sandboxed (bwrap)"
