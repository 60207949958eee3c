"""Tool exposure (SPEC §3, issue 23): which tools the model sees, and which it may call.

The tools array is fixed for the whole run: computed once, at the run's first request, and sent
byte-identical on every request after it, so a provider's prompt cache keeps hitting. It holds the
`core` tools plus the most common tools of each of the intent's groups (`intent.STARTERS`); a
one-statistic question is offered only `SINGLE_CORE` and its group's few starters; time-series tools
only when the data has a date column. The question's words pick no tools: the model finds the
tools it needs by tool_search.

What can be *called* grows within the run: `tool_search` finds tools by name, description and
keywords, by words and by meaning in any language (tool_ranking.py), returns their full schemas and makes them callable at once, through
the generic `call_tool(name, arguments)` (or by name); calling a tool of a group outside the run's
groups makes that group's starters callable; situational tools (retract_evidence, read_tool_output
...) become callable when what they act on exists. A tool that is neither listed nor made callable
is refused with `tool_not_exposed`, except the tools any kind of turn starts with (`intent.callable_tools`):
the kind is a guess, so it picks what is listed, never what a model that names a common tool may call.
Only the groups the user's own restrictions rule out ("no charts") are pruned.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from analysis_tools import Registry, Tool, ToolError, ToolResult
from analysis_tools.registry import GROUPS
from app.agent.policy.intent import STARTERS, callable_tools, starter_tools
from app.agent.tools.tool_ranking import catalog_ranking

# Every group of the catalog. A Toolbox built without an intent's groups passes this very tuple, and
# `Exposure.reset` tells that case by identity.
ALL_GROUPS = GROUPS

# Harness tools that can do nothing until something exists: offered from the request after it does.
SITUATIONAL = {
    "task_update": "tasks",
    "task_get": "tasks",
    "task_list": "tasks",
    "retract_evidence": "evidence",
    "search_knowledge": "knowledge",
    "read_tool_output": "outputs",
    "compact_context": "outputs",
}
ENABLES = {"task_create": "tasks", "record_evidence": "evidence"}  # a successful call makes the situation
# The only harness tools a one-statistic question's tools array holds (the rest stay callable):
# compute it (its own tool or run_python), find another tool and call it, record the evidence.
SINGLE_CORE = ("record_evidence", "run_python", "tool_search", "call_tool")
# ... and of any other turn but a full report (which plans, and lists every core tool). The other core
# tools (task_create, ask_user_question, preview_data ...) are named in call_tool's description (and
# the prompt's planning line) and called through it: the first request stays <= 8,000 characters.
LEAN_CORE = SINGLE_CORE
LISTED_CORE = {"single": SINGLE_CORE, "lean": LEAN_CORE}
CALL_TOOL = "call_tool"
TIME_GROUP = "timeseries"


class Exposure:
    """The tools a turn exposes, in the order they were first offered, and exactly which tool names
    the last request offered."""

    def __init__(
        self,
        registry: Registry,
        groups: Iterable[str],
        pruned: Iterable[str] = (),
        scope: str = "full",
        focus: bool = True,
        has_dates: bool | None = None,
        listing: str | None = None,
    ):
        self.registry = registry
        # which core tools the tools array lists: "single", "lean" or "all" (by default: by the scope)
        self.listing = listing or ("single" if scope == "single" else "all")
        self.focus = focus  # the lean starters (off for the built-in analyst: it plans every standard analysis)
        self.has_dates = has_dates  # None: not known (no data in view); False: time-series tools are not offered
        self.reset(groups, pruned, scope)

    def reset(self, groups: Iterable[str], pruned: Iterable[str] = (), scope: str = "full") -> None:
        """A new turn: back to core + the starters of the intent's groups."""
        self.pruned = set(pruned)
        everything = groups is ALL_GROUPS  # a Toolbox built without an intent (tests, tools) sees it all
        self.base = set(groups) - self.pruned
        if self.has_dates is False:  # trend words alone, without a date column, bring no time-series tools
            self.base.discard(TIME_GROUP)
        self.scope = scope
        self.starters = (
            {t.name for t in self.registry}
            if everything
            else starter_tools(self.registry, self.base, scope, self.focus) - set(SITUATIONAL)
        )
        if self.has_dates is False and not everything:
            self.starters -= {t.name for t in self.registry if t.group == TIME_GROUP}
        # named by the model, any kind's starters run, whatever this turn's kind (a greeting's turn: none)
        self.callable = (
            set()
            if everything or not self.base
            else {
                n
                for n in callable_tools(self.registry) - set(SITUATIONAL)
                if (t := self.registry.get(n)) is not None
                and t.group not in self.pruned
                and not (self.has_dates is False and t.group == TIME_GROUP)
            }
        )
        self.situations: set[str] = set()
        self.called: set[str] = set()  # tools called in this turn
        self.added: set[str] = set()  # found by tool_search or kept by use: exposed for the rest of the turn
        self.pending_tools: set[str] = set()  # found in this round, exposed from the next request
        self.order: list[str] = []  # names in the order they were first offered (append-only)
        self.offered: set[str] | None = None  # None until the first request is assembled
        self.fixed: list[Tool] | None = None  # the run's tools array, fixed at its first request
        self.requests = 0

    # --- what is exposed ----------------------------------------------------------------------
    def names(self) -> set[str]:
        """Tool names exposed now (before pruning)."""
        return self.starters | self.called | self.added

    def enable(self, situation: str) -> None:
        """Something now exists (a task, evidence, knowledge): its tools join from the next request."""
        if situation in self.situations:
            return
        self.situations.add(situation)
        if not self.base <= {"core"} or "core" in self.base:  # a greeting turn stays without tools
            self.pending_tools |= {
                n
                for n, s in SITUATIONAL.items()
                if s == situation and (t := self.registry.get(n)) is not None and t.group in self.base
            } - self.names()

    def _ordered(self, names: set[str]) -> list[Tool]:
        """Those offered before first, in their order; new ones after them, in catalog order."""
        allowed = {n for n in names if (t := self.registry.get(n)) is not None and t.group not in self.pruned}
        known = [n for n in self.order if n in allowed]
        new = [t.name for t in self.registry if t.name in allowed and t.name not in set(known)]
        return [t for n in known + new if (t := self.registry.get(n)) is not None]  # all of them: `allowed` are known

    def tools(self) -> list[Tool]:
        return self._ordered(self.names())

    def groups(self) -> set[str]:
        """The groups with at least one exposed tool (the intent's groups included)."""
        return (self.base | {t.group for t in self.tools()}) - self.pruned

    @property
    def pending(self) -> set[str]:
        """Groups of the tools tool_search found in this round (exposed from the next request)."""
        return {t.group for t in self.registry if t.name in self.pending_tools}

    def listed(self) -> list[Tool]:
        """The tools array of every request: what is exposed now, less the core tools the listing
        leaves out (`LISTED_CORE`; they stay callable)."""
        tools = self.tools()
        core = LISTED_CORE.get(self.listing)
        if core is None:
            return tools
        return [t for t in tools if t.group != "core" or t.name in core or t.name in self.added]

    def next_request(self) -> list[Tool]:
        """One request's tools: the run's fixed array (computed at the first request, then the same
        list every time, whatever tool_search found or the run made callable since)."""
        self.requests += 1
        self.added |= self.pending_tools
        self.pending_tools.clear()
        if self.fixed is None:
            self.fixed = self.listed()
            self.order = [t.name for t in self.fixed]
            self.offered = set(self.order)
        return self.fixed

    def upcoming(self) -> list[Tool]:
        """The tools the next request will offer, without assembling it."""
        return self.fixed if self.fixed is not None else self.listed()

    def is_offered(self, name: str) -> bool:
        """May the model call this tool now: listed in the tools array, made callable in this run
        (found by tool_search, a called group's starters, a situation that exists), or one any kind of
        turn starts with (`callable`: the kind is a guess)."""
        tool = self.registry.get(name)
        return (
            tool is not None
            and tool.group not in self.pruned
            and (
                name in self.names()
                or name in self.pending_tools
                or name in (self.offered or ())
                or name in self.callable
            )
        )

    def note_call(self, name: str) -> None:
        """A called tool stays for the rest of the turn; calling a tool of a group outside the turn's
        groups brings that group's starters from the next request."""
        tool = self.registry.get(name)
        if tool is None or not self.is_offered(name):
            return
        self.called.add(name)
        if tool.group not in self.base and tool.group in STARTERS:
            self.added |= {
                t.name for t in self.registry if t.group == tool.group and t.name in STARTERS[tool.group]
            } - self.names()

    def request_tools(self, names: Iterable[str]) -> tuple[list[str], list[str]]:
        """Make tools callable at once (through call_tool); returns (newly callable, refused because pruned)."""
        wanted = {n: t for n in names if (t := self.registry.get(n)) is not None}
        refused = sorted(n for n, t in wanted.items() if t.group in self.pruned)
        exposed = self.names()
        new = sorted(set(wanted) - set(refused) - exposed)
        self.added.update(new)
        return new, refused

    def snapshot(self) -> dict[str, Any]:
        return {
            "groups": sorted(self.groups()),
            "tools": len(self.tools()),
            "listed": len(self.fixed if self.fixed is not None else self.listed()),
            "called": sorted(self.called),
            "added": sorted(self.added),
            "pending": sorted(self.pending_tools),
            "pruned": sorted(self.pruned),
            "requests": self.requests,
        }


def refusal(name: str, exposure: Exposure | None, known: bool) -> ToolResult:
    """The structured error for a call to a tool the request did not offer; it is never executed."""
    if not known:
        return ToolResult.failure(
            ToolError(
                "unknown_tool",
                f"There is no tool named {name!r}.",
                hint="Use tool_search to find a tool.",
                retryable=False,
            ).as_dict()
        )
    tool = exposure.registry.get(name) if exposure else None
    group = tool.group if tool else None
    if exposure and group in exposure.pruned:
        hint = f"The user's request rules out the {group} tools in this turn: answer without them."
    else:
        hint = f'Find it with tool_search, then call it with call_tool(name="{name}", arguments={{...}}).'

    return ToolResult.failure(
        ToolError(
            "tool_not_exposed", f"{name} is not available in this request.", hint=hint, retryable=False, group=group
        ).as_dict()
    )


# --- tool_search ----------------------------------------------------------------------------------
def rank_tools(registry: Iterable[Tool], query: str, limit: int = 8) -> list[Tool]:
    """The `limit` tools that best match the query, best first: its words against each tool's name,
    keywords and description, and its meaning against what each tool does (tool_ranking.py)."""
    if not (query or "").strip():
        return []
    tools = {t.name: t for t in registry}
    return [tools[name] for name in catalog_ranking(tools.values()).order(query)[:limit]]


DETAILED_MATCHES = 3  # tool_search's default limit: the matches it returns, each with its full schema


def schema_chars(tools: Iterable[Tool]) -> int:
    """Size of the tool schemas as sent (JSON characters), for measuring lazy exposure."""
    import json

    return sum(len(json.dumps(t.schema(), ensure_ascii=False)) for t in tools)
