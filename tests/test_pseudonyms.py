"""Masking that can be undone for the user (issue 23 point 6): the model reads stable pseudonyms
(姓名_017) and is told which columns are masked, its tool calls that name a pseudonym run on the real
value, and the answer and the owner's report show the real names; model requests, traces and the
stored report (what a share link serves) keep the pseudonyms."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd

from app.agent.model.interface import ModelReply
from app.agent.policy.privacy import PiiMasker, PseudonymBook, book_path
from app.agent.tracing import trace_dir
from app.db.models import Event, Report, Run
from app.web.reports import owners_content
from app.web.run_panel import run_context
from tests.factories import setup, start_run
from tests.fakes import call

NAMES = ["王小红", "彭小明", "李华", "张伟", "刘洋", "陈静", "杨帆", "赵磊", "黄敏", "周杰"] * 3
SCORES = [71, 98, 64, 85, 77, 90, 58, 88, 69, 73] * 3
STUDENTS = pd.DataFrame(
    {"姓名": [f"{n}{i // 10 or ''}" for i, n in enumerate(NAMES)], "成绩": [s - i // 10 for i, s in enumerate(SCORES)]}
)
PSEUDONYM = re.compile(r"姓名_\d{3}")


class ReadingModel:
    """A scripted model that acts on what it reads, as a capable one would: it ranks the students,
    looks one up by the pseudonym it read in the ranking, and names that pseudonym in its answer."""

    kind = "scripted"
    name = "scripted"

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.best = ""

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
        self.requests.append({"messages": [dict(m) for m in messages], "tools": tools})
        replies = sum(1 for m in messages if m["role"] == "assistant")
        last = str(messages[-1].get("content") or "")
        if replies == 0:
            code = "d = list(datasets.values())[0]\nprint(d.sort_values('成绩', ascending=False).head(3).to_string())"
            return ModelReply(None, [call("run_python", "rank", code=code)])
        if replies == 1:
            self.best = PSEUDONYM.findall(last)[0]  # the first row of the ranking
            code = (
                f"d = list(datasets.values())[0]\nprint('score:', d.loc[d['姓名'] == '{self.best}', '成绩'].tolist())"
            )
            failing = f"raise ValueError('no such student: ' + '{self.best}')"  # its error names the real value
            return ModelReply(
                None,
                [
                    call("run_python", "lookup", code=code),
                    call("run_python", "fails", code=failing),
                    call("task_create", "task", subject=f"Describe {self.best}"),  # the harness keeps its words
                ],
            )
        score = re.search(r"score: \[(\d+)\]", "\n".join(str(m.get("content")) for m in messages[-3:]))
        return ModelReply(f"成绩最好的学生是 {self.best}，得分 {score.group(1) if score else '未知'}。")


def test_pseudonyms_are_what_the_model_reads_and_the_user_reads_the_names(tmp_path):
    path = tmp_path / "students.csv"
    STUDENTS.to_csv(path, index=False)
    model = ReadingModel()
    settings, db, service, ws = setup(tmp_path, path, lambda *_: model)
    run_id = start_run(service, ws, "彭小明的成绩怎么样？哪些学生成绩最好？")
    service.execute(run_id)

    top = STUDENTS.sort_values("成绩", ascending=False).iloc[0]  # independent of Verity: pandas itself
    assert top["姓名"] == "彭小明"
    sent = json.dumps(model.requests, ensure_ascii=False)
    for real in STUDENTS["姓名"]:
        assert real not in sent, real  # the question's name too
    assert "Masked personal data: 姓名 (students)" in sent  # told which column, and what the pseudonyms are
    assert PSEUDONYM.fullmatch(model.best)
    assert f"score: [{top['成绩']}]" in sent  # the filter on the pseudonym found the real row
    assert f"no such student: {model.best}" in sent  # the error came back masked
    assert f"Describe {model.best}" in events_of(db, run_id)  # a task keeps the pseudonym

    with db.session() as session:
        run = session.get(Run, run_id)
        assert run.status == "done" and run.answer is not None
        assert "彭小明" in run.answer and f"{top['成绩']}" in run.answer and model.best not in run.answer
        report = session.query(Report).filter_by(run_id=run_id).one()
        stored = json.dumps(report.content, ensure_ascii=False)
        assert "彭小明" not in stored and model.best in stored  # what a share link serves
        assert "彭小明" in json.dumps(owners_content(report, settings), ensure_ascii=False)  # the owner's download
        panel = run_context(session, run, "zh", settings)  # the owner's page shows the names
        assert [t["subject"] for t in panel["tasks"]] == ["Describe 彭小明"]
        events = json.dumps([e.data for e in session.query(Event).filter_by(run_id=run_id)], ensure_ascii=False)
    traces = trace_dir(settings, ws, run_id)
    written = "".join(f.read_text(encoding="utf-8") for f in traces.rglob("*") if f.is_file())
    assert written and events
    for real in STUDENTS["姓名"]:
        assert real not in written and real not in events, real


def events_of(db: Any, run_id: str) -> str:
    with db.session() as session:
        return json.dumps([e.data for e in session.query(Event).filter_by(run_id=run_id)], ensure_ascii=False)


def test_masking_masked_text_again_keeps_the_pseudonyms_whole():
    """A short name inside a pseudonym (li in email_…, 17 in 姓名_017) is not masked again: earlier
    answers and reports are masked a second time."""
    people = pd.DataFrame({"姓名": ["li", *(f"P{i}" for i in range(20))], "mail": ["li@x.org", *[None] * 20]})
    masker = PiiMasker.from_frames({"p": {"姓名": "name", "mail": "email"}}, {"p": people})
    once = masker.mask("li wrote from li@x.org; P17 too")
    assert masker.mask(once) == once and masker.unmask(once) == "li wrote from li@x.org; P17 too"
    assert re.fullmatch(r"姓名_001 wrote from email_[0-9a-f]{6}; 姓名_019 too", once)


def test_the_same_value_gets_the_same_pseudonym_in_every_run_of_a_workspace(tmp_path):
    """Pseudonyms come from the workspace's book: a second masker (another run) reads them back,
    and an address found by pattern keeps its pseudonym too."""
    book = book_path(tmp_path)
    first = PiiMasker.from_frames({"s": {"姓名": "name"}}, {"s": STUDENTS}, PseudonymBook.load(book))
    masked = first.mask("彭小明 wrote from peng@example.com")
    again = PiiMasker.from_frames({"s": {"姓名": "name"}}, {"s": STUDENTS.iloc[::-1]}, PseudonymBook.load(book))
    assert again.mask("彭小明 wrote from peng@example.com") == masked
    assert masked.startswith("姓名_002 wrote from email_")  # numbered in the order first seen
    assert PiiMasker.from_book(book).unmask(masked) == "彭小明 wrote from peng@example.com"
    assert "peng@example.com" not in PiiMasker.from_book(book).mask("peng@example.com")


def test_a_question_the_model_asks_about_pseudonyms_shows_the_user_the_names(tmp_path):
    """The model can only write the pseudonyms it reads; the user answering its question sees and
    picks the real names (page and API), and the stored question keeps the pseudonyms."""
    from app.db.models import Question
    from app.web.api import api_run
    from tests.fakes import ScriptedModel

    path = tmp_path / "students.csv"
    STUDENTS.to_csv(path, index=False)
    settings, db, service, ws = setup(tmp_path, path, lambda *_: model)
    first = "姓名_002"  # 彭小明: the second name of the file, numbered in the order first seen
    options = [{"label": first, "description": "the student"}, {"label": "姓名_001", "description": "the other"}]
    model = ScriptedModel(
        [ModelReply(None, [call("ask_user_question", "ask", question=f"Do you mean {first}?", options=options)])]
    )
    run_id = start_run(service, ws, "How did the student with the top score do?")
    service.execute(run_id)
    with db.session() as session:
        run = session.get(Run, run_id)
        assert run.status == "waiting", run.error
        stored = session.query(Question).filter_by(run_id=run_id).one()
        assert stored.question == f"Do you mean {first}?"  # records keep the pseudonyms
        panel = run_context(session, run, "en", settings)["question"]
        assert panel["question"] == "Do you mean 彭小明?"
        assert [o["label"] for o in panel["options"]] == ["彭小明", "王小红"]
        api = api_run(run, session, settings)["question"]
        assert api["question"] == "Do you mean 彭小明?" and api["options"][0]["label"] == "彭小明"


def _number_names(folder: str, start: int) -> dict[str, str]:
    names = pd.DataFrame({"姓名": [f"学生{start + i}" for i in range(40)]})
    masker = PiiMasker.from_frames({"s": {"姓名": "name"}}, {"s": names}, Path(folder))
    return {real: masker.mask(real) for real in names["姓名"]}


def test_runs_numbering_new_names_at_once_never_share_a_pseudonym(tmp_path):
    """Eight runs of one workspace meet new names at the same moment: every name gets its own
    pseudonym, the one its run used, and the saved book unmasks each back to its own name."""
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(8) as pool:
        given = pool.starmap(_number_names, [(str(tmp_path), 1000 * k) for k in range(8)])
    used = {real: pseudonym for run in given for real, pseudonym in run.items()}
    assert len(used) == 320 and len(set(used.values())) == 320  # one name, one pseudonym
    book = PiiMasker.from_book(book_path(tmp_path))
    assert all(book.unmask(pseudonym) == real for real, pseudonym in used.items())
