"""The tools one run can use: the analysis catalog plus the harness tools, the run's datasets,
and the execution of one model tool call into a tool message."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from analysis_tools import REGISTRY as ANALYSIS_REGISTRY
from analysis_tools import Registry, ToolContext, ToolError, ToolResult, make_tool
from analysis_tools.common import TABLE_DIGITS
from analysis_tools.registry import suggest
from analysis_tools.tables import SIDE_TABLE_TOOLS, previous_version_name, table_name
from app.agent.context.compaction import NO_SHELVE
from app.agent.context.summary import MARKER
from app.agent.model.interface import ToolCallRequest
from app.agent.policy import clarify
from app.agent.policy.privacy import map_strings
from app.agent.run_scope import RunScope, run_scope
from app.agent.store import Session, run_has_evidence, run_has_tasks
from app.agent.tools import analysis_plan, context_tools, evidence, sheets, tasks
from app.agent.tools.exposure import ALL_GROUPS, CALL_TOOL, ENABLES, Exposure, refusal
from app.agent.tools.python_tool import run_python
from app.agent.tools.results import CallResults
from app.agent.tools.tool_search import call_tool, tool_search

# run_python's description in every request: whole sentences that say what the code can use
# (the full text, with the limits, comes from tool_search).
RUN_PYTHON_BRIEF = (
    "Run Python in an isolated sandbox (no network, read-only data, limits) when no tool fits. Each dataset "
    "is a DataFrame variable (also datasets[name]); pd, np, stats (scipy.stats), sm, smf, sklearn, plt are "
    "ready. print() what you need; set `result` to a dict of key numbers."
)
# call_tool's description in every request names the core tools the lean tools array leaves out
CALL_TOOL_BRIEF = (
    "Call a tool by name: one tool_search found, or task_create, task_update, ask_user_question, preview_data, "
    "profile_dataset, record_analysis_plan, retract_evidence, read_tool_output."
)
HARNESS_REGISTRY = Registry(
    [
        make_tool(tasks.task_create, "core", read_only=False),
        make_tool(tasks.task_update, "core", read_only=False),
        make_tool(tasks.task_get, "core"),
        make_tool(tasks.task_list, "core"),
        make_tool(evidence.record_evidence, "core", read_only=False),
        make_tool(
            evidence.retract_evidence,
            "core",
            read_only=False,
            keywords=["retract", "withdraw", "supersede", "wrong", "撤回", "更正"],
        ),
        make_tool(
            analysis_plan.record_analysis_plan,
            "core",
            read_only=False,
            keywords=["plan", "goal", "metric", "method", "计划", "目标", "指标"],
        ),
        make_tool(
            clarify.ask_user_question,
            "core",
            read_only=False,
            keywords=["ask", "question", "clarify", "user", "confirm", "询问", "确认", "澄清"],
        ),
        make_tool(sheets.select_sheet, "data", read_only=False),
        make_tool(
            context_tools.read_tool_output,
            "core",
            keywords=["read", "full output", "truncated", "transcript", "读取", "完整输出"],
        ),
        make_tool(
            context_tools.compact_context, "core", keywords=["compact", "context", "summarise", "压缩", "上下文"]
        ),
        make_tool(
            context_tools.search_knowledge,
            "core",
            keywords=["knowledge", "definition", "glossary", "reference", "notes", "口径", "定义", "参考", "资料"],
        ),
        make_tool(
            run_python, "core", keywords=["python", "code", "custom", "script", "pandas"], brief=RUN_PYTHON_BRIEF
        ),
        make_tool(tool_search, "core", keywords=["find", "search", "tool", "查找", "工具"]),
        make_tool(call_tool, "core", keywords=["call", "run", "invoke", "调用"], brief=CALL_TOOL_BRIEF),
    ]
)
FULL_REGISTRY = ANALYSIS_REGISTRY.extend(HARNESS_REGISTRY)


OUTPUTS_AFTER = 8  # as many tool results as micro-compaction keeps whole (settings.keep_tool_results)


@dataclass
class DatasetCatalog:
    """The workspace's datasets by name, loaded on first use."""

    loaders: dict[str, Callable[[], pd.DataFrame]] = field(default_factory=dict)
    active: str | None = None
    _cache: dict[str, pd.DataFrame] = field(default_factory=dict)
    _versions: dict[str, int] = field(default_factory=dict)  # name -> the version the catalog holds now

    def put(self, name: str, frame: pd.DataFrame, activate: bool = True) -> None:
        """Register a table a tool produced; it becomes the active dataset unless `activate` is off
        (a side table)."""
        self.loaders[name] = lambda: frame
        self._cache[name] = frame
        if activate:
            self.active = name

    def keep_previous(self, name: str) -> str | None:
        """Before a new version of `name` replaces it: keep the current one reachable under
        `<name>_v<n>` (not active), and return that name (None when there is no such dataset)."""
        if name not in self.loaders:
            return None
        frame = self.get(name)
        version = self._versions.get(name, 1)
        while previous_version_name(name, version) in self.loaders:
            version += 1
        kept = previous_version_name(name, version)
        self.put(kept, frame, activate=False)
        self._versions[name] = version + 1
        return kept

    def names(self) -> list[str]:
        return list(self.loaders)

    def get(self, name: str | None) -> pd.DataFrame:
        name = name or self.active
        if name not in self.loaders:
            raise ToolError(
                "dataset_not_found",
                f"There is no dataset named {name!r}.",
                hint="Use list_datasets to see the datasets.",
                did_you_mean=suggest(str(name), self.names()),
                available=self.names(),
            )
        if name not in self._cache:
            self._cache[name] = self.loaders[name]()
        return self._cache[name]

    def all(self) -> dict[str, pd.DataFrame]:
        return {name: self.get(name) for name in self.loaders}


class Toolbox:
    def __init__(
        self,
        catalog: DatasetCatalog,
        context: ToolContext,
        registry: Registry = FULL_REGISTRY,
        groups: set[str] | None = None,
        mask: Callable[[str], str] = str,
        unmask: Callable[[str], str] = str,
        store_table: Callable[..., str] | None = None,
        pruned: set[str] | None = None,
        scope: str = "full",
        focus: bool = True,
        has_dates: bool | None = None,
        listing: str | None = None,
    ):
        self.catalog = catalog
        self.context = context
        self.registry = registry
        # lazy exposure (exposure.py): core + the intent's groups, widened by use and tool_search
        self.exposure = Exposure(
            registry, ALL_GROUPS if groups is None else groups, pruned or (), scope, focus, has_dates, listing
        )
        if context.scope is None:  # a toolbox outside a run (tests, a script): its own state still needs a home
            context.scope = RunScope()
        run_scope(context).exposure = self.exposure  # tool_search widens it
        self.mask = mask  # personal data never reaches the model
        self.unmask = unmask  # ...which names people by pseudonyms; tools run on the real values (privacy.py)
        self.records = CallResults(mask)  # each call's result as data (the built-in analyst reads these)
        self.results = 0  # tool results this turn (micro-compaction starts past `OUTPUTS_AFTER`)
        self.store_table = store_table  # (source, tool, frame, step, info) -> stored dataset name

    @property
    def pause_requested(self) -> dict[str, Any] | None:
        """Set by ask_user_question: the loop stops after this round and the run waits (clarify.py)."""
        return run_scope(self.context).pause

    @property
    def groups(self) -> set[str]:
        return self.exposure.groups()

    def exposed(self) -> list[str]:
        return [t.name for t in self.exposure.tools()]

    def schemas(self, messages: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        """The tools of one model request (call once per request: searched groups appear now). When
        the messages point to a saved output (a truncated, persisted or compacted result, a
        transcript), read_tool_output is offered in this very request: a pointer to a tool the model
        cannot call is a dead end."""
        if messages and any(points_to_saved_output(m) for m in messages):
            self.exposure.enable("outputs")
        return [t.schema() for t in self.exposure.next_request()]

    def resolve(self, call: ToolCallRequest) -> ToolCallRequest | ToolResult:
        """The call a call_tool call stands for (same id: evidence cites it), or its structured error;
        any other call as it is."""
        if call.name != CALL_TOOL or call.argument_error:
            return call
        name, arguments = call.arguments.get("name"), call.arguments.get("arguments") or {}
        if isinstance(arguments, str):  # some models send the arguments as a JSON string
            try:
                arguments = json.loads(arguments or "{}")
            except ValueError:
                arguments = None
        if not isinstance(name, str) or not name or name == CALL_TOOL or not isinstance(arguments, dict):
            return ToolResult.failure(
                ToolError(
                    "invalid_arguments",
                    "call_tool needs name (a tool's name) and arguments (one JSON object).",
                    hint='call_tool(name="correlation_analysis", arguments={"columns": ["a", "b"]})',
                ).as_dict()
            )
        return ToolCallRequest(call.id, name, arguments, json.dumps(arguments, ensure_ascii=False, default=str))

    def execute(self, call: ToolCallRequest) -> ToolResult:
        """Run one tool call (a call_tool call runs the tool it names); every failure becomes a
        structured error result. Pseudonyms in the arguments of a tool that computes on the data (a
        filter on 姓名_017, code that names one) become the real values first; the harness's own tools
        (tasks, evidence, plans, questions) keep the model's words as written, pseudonyms and all,
        since traces and later prompts show them."""
        resolved = self.resolve(call)
        if isinstance(resolved, ToolResult):
            return resolved
        call = resolved
        if call.name not in HARNESS_REGISTRY or call.name == "run_python":
            call = replace(call, arguments=map_strings(call.arguments, self.unmask))
        tool = self.registry.get(call.name)
        if call.argument_error:
            return ToolResult.failure(
                ToolError(
                    "invalid_arguments", call.argument_error, hint="Re-emit the call with arguments as one JSON object."
                ).as_dict()
            )
        if tool is not None and not self.exposure.is_offered(call.name):
            return refusal(call.name, self.exposure, known=True)  # never executed
        if self.pause_requested:  # a question is open: nothing else runs until it is answered (clarify.py)
            return clarify.held_back(call.name)
        self.exposure.note_call(call.name)
        ctx = ToolContext(
            language=self.context.language,
            figures_dir=self.context.figures_dir,
            figure_tag=self.context.figure_tag,
            call_id=call.id,
            scope=self.context.scope,
            dataset_name=call.arguments.get("dataset") or self.catalog.active,
        )
        data = None
        try:
            if tool is not None and tool.needs_data:
                if tool.multi_data:
                    data = self.catalog.all()
                else:
                    data = self.catalog.get(call.arguments.get("dataset"))
            if tool is not None and tool.name == "list_datasets":
                ctx.datasets = self.catalog.all()
        except ToolError as err:
            return ToolResult.failure(err.as_dict())
        result = self.registry.run(call.name, data, ctx, **call.arguments)
        if result.ok and call.name in ENABLES:  # the first task or evidence brings the tools that act on it
            self.exposure.enable(ENABLES[call.name])
        self.results += 1
        # (results that are never shortened, NO_SHELVE, point nowhere)
        if self.results >= OUTPUTS_AFTER or (
            call.name not in NO_SHELVE and len(tool_message_content(result)) > self._truncate_chars()
        ):
            self.exposure.enable("outputs")  # outputs are shelved or compacted: read_tool_output, compact_context
        # Only transformations (they describe their `step`) make a new version; result tables of
        # read-only tools such as value_counts or detect_data_quality are not datasets.
        if (
            result.ok
            and result.table is not None
            and result.payload.get("step")
            and tool is not None
            and tool.group == "data"
        ):
            self.keep_table(tool.name, ctx.dataset_name or self.catalog.active, result)
        return result

    def _truncate_chars(self) -> int:
        window = run_scope(self.context).context_window
        return int(getattr(window, "truncate_chars", 3_000) or 3_000)

    def keep_table(self, tool: str, source: str | None, result: ToolResult) -> None:
        """A data tool's output becomes a new dataset version (logged, reversible) that later
        tools read by default."""
        step = result.payload.get("step") or tool
        info = result.payload.get("info")
        wanted = table_name(source or tool, tool, str(result.payload.get("output") or ""))
        name = (
            self.store_table(source, tool, result.table, step, info, wanted)
            if self.store_table
            else (wanted or source or tool)
        )
        # a new version keeps the one it replaces reachable (the store keeps it too, inactive)
        previous = self.catalog.keep_previous(name) if name == source else None
        side = tool in SIDE_TABLE_TOOLS  # a subset or a summary: the active dataset stays
        was_active = self.catalog.active
        self.catalog.put(name, result.table, activate=not side)
        result.payload["dataset_name"] = name
        result.payload["side_table"] = side
        if previous:
            result.payload["previous_version"] = previous
        result.text += "\n\n[dataset]\n" + kept_table_note(name, source, previous, side, was_active)


def kept_table_note(name: str, source: str | None, previous: str | None, side: bool, active: str | None) -> str:
    """What the model reads about where a data tool's output went and which dataset is active."""
    if side and name != source:
        return (
            f"The result is stored as the side table '{name}'; the active dataset is still '{active or source}'. "
            f"Pass dataset='{name}' to analyse the result."
        )
    if previous:
        where = "now the active dataset" if not side else f"the active dataset is still '{active}'"
        return (
            f"The result is a new version of '{name}' ({where}); "
            f"the previous version is unchanged and still available as '{previous}'."
        )
    kept = f"; '{source}' is unchanged and still available" if source and name != source else ""
    return f"The result is stored as dataset '{name}' (now the active dataset){kept}."


def points_to_saved_output(message: dict[str, Any]) -> bool:
    """Does the message point to a saved output: a shortened or compacted result ('read_tool_output(id=...')
    or the summary of an earlier conversation? (A tool description that merely mentions
    read_tool_output, in a tool_search result, is no pointer.)"""
    content = message.get("content")
    return isinstance(content, str) and ('read_tool_output(id="' in content or content.startswith(MARKER))


def tool_message_content(result: ToolResult) -> str:
    """What the model sees of a tool result: tagged text, the plain reading, numbers, charts."""
    if not result.ok:
        return json.dumps(result.error, ensure_ascii=False, default=str)
    parts = [result.text]
    if result.interpretation and "[interpretation]" not in (result.text or ""):  # once, not twice
        parts.append(f"[interpretation]\n{result.interpretation}")
    metrics = {k: v for k, v in result.metrics.items() if k != "duration_ms" and not shown_in(k, v, result.text or "")}
    if metrics:
        parts.append("[metrics]\n" + json.dumps(shown_precision(metrics), ensure_ascii=False, default=str))
    if result.figures:
        # The workspace-relative name, never the server's path (the model has no use for it).
        parts.append(
            "[figures]\n" + "\n".join(f"- figures/{Path(f.path).name}: {f.caption}" for f in result.figure_records())
        )
    return "\n\n".join(p for p in parts if p)


def shown_precision(value: Any) -> Any:
    """Floats at 6 significant figures, as the tables print them: 0.008604206500956023 costs the model
    17 digits and the verifier checks restated numbers against the stored full-precision metrics."""
    if isinstance(value, float) and math.isfinite(value):
        return float(f"{value:.{TABLE_DIGITS}g}")
    if isinstance(value, dict):
        return {k: shown_precision(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shown_precision(v) for v in value]
    return value


def situations(session: Session, run_id: str, knowledge: Any) -> set[str]:
    """What already exists when a turn starts (a resumed run's tasks and evidence, the workspace's
    reference notes), so their situational tools are offered from the first request."""
    found = {"knowledge"} if knowledge else set()
    if run_has_tasks(session, run_id):
        found.add("tasks")
    if run_has_evidence(session, run_id):
        found.add("evidence")
    return found


def shown_in(key: str, value: Any, text: str) -> bool:
    """Does the text already show this metric, as printed: a string (an id, a word), or a number on
    a line that names it ("mean 20.09", a table row "Ozone ... 116", "9 high and 0 low outliers")? Such
    a metric is not repeated in the [metrics] block (issue 23: a table is shown once); full-precision
    numbers the text rounds are kept, and so is a number whose line does not name it (a 1 in "group 1")."""
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        return False
    if isinstance(value, str):
        return bool(value) and re.search(rf"(?<![\w.]){re.escape(value)}(?![\w])", text) is not None
    if not isinstance(value, (int, float)) or value != value:  # NaN: say it
        return False
    shown = {str(value), f"{value:g}"}
    if isinstance(value, float) and value.is_integer():
        shown.add(str(int(value)))
    names = [part for part in re.split(r"[._\s]+", key) if part]
    for line in text.splitlines():
        for number in shown:
            if re.search(rf"(?<![\w.\-]){re.escape(number)}(?![\d])", line) and any(
                re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", line, re.IGNORECASE) for n in names
            ):
                return True
    return False
