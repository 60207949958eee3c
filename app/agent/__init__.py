"""The agent harness: the loop and what bounds, records and checks it (SPEC §2–§9).

The harness runs one turn of a ChatModel (a language model behind an OpenAI-compatible endpoint,
or the built-in analyst, app.analyst) over the run's tools, and it does not read the question for
the model: it classifies the intent (policy/intent.py) to set budgets and tool groups, and checks,
bounds and records what the model does. Its rooms:

    loop.py      the agent loop (~30 lines); each mechanism a named function beside it
    turn.py      one turn's state; run_scope.py what the harness tools of a run share
    model/       the ChatModel interface, the OpenAI-compatible client, recovery, tokens
    context/     the context cascade (compaction, shelved outputs, summaries) and what a turn is told
    tools/       the run's toolbox, lazy exposure, run_python, the harness tools (tasks, evidence)
    policy/      intent, budgets, the clarification gates, claim verification, privacy
    recorder.py  a run's messages and events as they happen; store.py the rest of its records
    tracing.py   every model and tool call as a span

What the rest of the app (app/runs.py, app/web, the CLI) may use is imported here; everything else
is the harness's own business.
"""

from app.agent.context.compaction import ContextWindow, request_compaction
from app.agent.context.conversation import compact_workspace, with_workspace_summary
from app.agent.context.outputs import OutputStore
from app.agent.context.question_reading import question_reading
from app.agent.context.sources import guidance_record, workspace_sources
from app.agent.loop import run_turn
from app.agent.model import ChatModel, ModelError, ModelReply, OpenAICompatibleModel, ToolCallRequest
from app.agent.policy.budget import budget_for, spent_in
from app.agent.policy.clarify import (
    Paused,
    answer_question,
    mark_waiting,
    resume_after_answer,
    turn_opening,
)
from app.agent.policy.intent import apply_intent, classify, classify_run
from app.agent.policy.privacy import PiiMasker, masked, unmasked
from app.agent.prompts import ALL_SECTIONS, detect_language, system_prompt
from app.agent.recorder import RunRecorder
from app.agent.run_scope import RunScope
from app.agent.store import open_questions
from app.agent.tools.evidence import evidence_dict
from app.agent.tools.tasks import task_dict
from app.agent.tools.toolbox import DatasetCatalog, Toolbox, situations
from app.agent.tracing import INLINE_LIMIT, build_trace, load_payload, trace_dir
from app.agent.turn import Interrupted, Turn

__all__ = [
    "ALL_SECTIONS",
    "INLINE_LIMIT",
    "ChatModel",
    "ContextWindow",
    "DatasetCatalog",
    "Interrupted",
    "ModelError",
    "ModelReply",
    "OpenAICompatibleModel",
    "OutputStore",
    "Paused",
    "PiiMasker",
    "RunRecorder",
    "RunScope",
    "ToolCallRequest",
    "Toolbox",
    "Turn",
    "answer_question",
    "apply_intent",
    "budget_for",
    "build_trace",
    "classify",
    "classify_run",
    "compact_workspace",
    "detect_language",
    "evidence_dict",
    "guidance_record",
    "load_payload",
    "masked",
    "mark_waiting",
    "open_questions",
    "question_reading",
    "request_compaction",
    "resume_after_answer",
    "unmasked",
    "run_turn",
    "situations",
    "spent_in",
    "system_prompt",
    "task_dict",
    "trace_dir",
    "turn_opening",
    "with_workspace_summary",
    "workspace_sources",
]
