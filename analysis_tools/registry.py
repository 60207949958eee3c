"""The tool registry: a tool is a typed function; its docstring is its description and its
signature is its JSON schema (as in simonw/llm and smolagents).

Conventions the registry relies on:
- a parameter named `data` receives the dataset (a DataFrame, or a dict of DataFrames when
  annotated so); the agent chooses it with the extra `dataset` argument;
- a parameter named `ctx` receives the `ToolContext`;
- parameters named `*_column`, `columns`, `*_columns` are column names and are checked against
  the data before the call (unknown ones get `did_you_mean`).
"""

from __future__ import annotations

import inspect
import json
import re
import time
import traceback
import types
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, get_args, get_origin

import pandas as pd
from rapidfuzz import fuzz, process

from .base import ToolContext, ToolError, ToolResult

GROUPS = ("core", "data", "stats", "ml", "timeseries", "plot")
_SPECIAL = {"data", "ctx"}


@dataclass
class Tool:
    name: str
    group: str
    func: Callable[..., ToolResult]
    description: str
    parameters: dict[str, Any]
    needs_data: bool = False
    multi_data: bool = False
    read_only: bool = True
    keywords: list[str] = field(default_factory=list)
    short: str = ""  # the description sent with every request, when the first sentence is not enough

    _compact: tuple[int, dict[str, Any]] | None = field(default=None, init=False, repr=False, compare=False)

    def schema(self) -> dict[str, Any]:
        """The OpenAI function-calling schema of this tool, with its parameters compacted (see
        `compact_parameters`; `self.parameters` itself is what validation uses). The compact
        parameters are built once, so every schema of the tool holds the same dict."""
        if self._compact is None or self._compact[0] != id(self.parameters):
            self._compact = (id(self.parameters), compact_parameters(self.parameters))
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.brief, "parameters": self._compact[1]},
        }

    @property
    def summary(self) -> str:
        return self.description.split("\n", 1)[0]

    @property
    def brief(self) -> str:
        """The description as sent with every request: its first sentence, whole words only (the
        rest, with every argument's full text, comes on demand from tool_search: `details`)."""
        return self.short or first_sentence(self.description, BRIEF_CHARS)

    def details(self) -> str:
        """The full description and every argument's full text (what tool_search shows)."""
        lines = [f"{self.name} ({self.group}): {' '.join(self.description.split())}"]
        required = set(self.parameters.get("required", []))
        for name, prop in self.parameters.get("properties", {}).items():
            kind = prop.get("type", "")
            extra = f" one of {prop['enum']}" if prop.get("enum") else ""
            default = f" (default {prop['default']!r})" if prop.get("default") not in (None, "") else ""
            need = " required" if name in required else ""
            lines.append(f"  - {name}: {kind}{extra}{need}{default}. {prop.get('description', '')}".rstrip())
        return "\n".join(lines)


DATASET_DESCRIPTION = "Dataset name; defaults to the active dataset."


BRIEF_CHARS = 120  # a tool's description in every request: its first sentence, at most this long
ARGUMENT_CHARS = 80  # an argument's description in every request: its first sentence, asides dropped over this
# an argument's first sentence ends at ". " only: its clauses after ";" or ":" belong to it (issue 23)
_ARGUMENT_END = re.compile(r"(?<!e\.g\.)(?<!i\.e\.)(?<!etc\.)(?<!vs\.)(?<=[.!?。])\s+|\n\s*\n")
# "(…)" closing a clause (one level of nesting); a parenthesis inside a formula ("(new - old) / old") stays
_ASIDE = re.compile(r"\s+\((?:[^()]|\([^()]*\))*\)(?=[,;.:]|$)")
# a sentence ends at . ! ? ; (not after "e.g.", "i.e.", "etc.", "vs.")
_SENTENCE_END = re.compile(r"(?<!e\.g\.)(?<!i\.e\.)(?<!etc\.)(?<!vs\.)(?<=[.!?。；;])\s+|(?<=[.!?])$|\n\s*\n")


def first_sentence(text: str, limit: int) -> str:
    """The first sentence of a text; when longer than `limit`, cut at its last clause boundary that
    fits (", ", " (", ": "), else at a word boundary with "…" (never mid-word)."""
    text = " ".join((text or "").split("\n\n", 1)[0].split())
    first = _SENTENCE_END.split(text, maxsplit=1)[0].strip().rstrip(";；,")
    if len(first) <= limit:
        return first
    head = first[:limit]
    clause = max(
        (
            i
            for i in (head.rfind(", "), head.rfind(" ("), head.rfind(": "), head.rfind(" — "))
            if head[:i].count("(") == head[:i].count(")")
        ),
        default=-1,
    )  # not inside parentheses
    if clause >= 15:
        return head[:clause].rstrip(" ,;:(")
    cut = first[: limit - 1]
    cut = cut[: cut.rfind(" ")] if " " in cut else cut
    return cut.rstrip(" ,;:(") + "…"


# The argument vocabulary every tool shares (CONTRACT.md): explained once, in the system prompt
# (`vocabulary_note`), not again in each schema.
VOCABULARY_NOTES = (  # (argument names, what they mean), explained once in the system prompt
    (("dataset",), "the active one if left out"),
    (("value_column",), "the numeric measure"),
    (("group_column",), "its groups"),
    (("x_column", "y_column"), "a pair"),
    (("target_column", "feature_columns"), "a model's outcome and inputs"),
    (("alpha",), "significance level"),
    (("columns", "date_column", "title"), ""),
)
VOCABULARY = {name: meaning for names, meaning in VOCABULARY_NOTES for name in names}


def vocabulary_note() -> str:
    """One line for the system prompt: what the shared argument names mean."""
    # names without a meaning (columns, title ...) say nothing a schema does not: left out
    parts = [f"{'/'.join(names)}: {meaning}" for names, meaning in VOCABULARY_NOTES if meaning]
    return "- Shared tool arguments: " + "; ".join(parts) + "."


def _argument_text(name: str, prop: dict[str, Any]) -> str:
    """An argument's description as sent: none for the shared vocabulary or when it only lists the
    enum; else its first clause, without examples or asides."""
    text = prop.get("description") or ""
    if name in VOCABULARY:
        return ""
    if prop.get("enum"):
        rest = text
        for value in prop["enum"]:
            rest = rest.replace(str(value), "")
        if len(re.sub(r"[\W_]|\b(?:or|and|the|one|of)\b", "", rest)) < 12:
            return ""
    return argument_sentence(text)  # a format ({"column": ..., "op": ...}) stays whole: the call fails without it


def argument_sentence(text: str) -> str:
    """An argument's first sentence, whole: over ARGUMENT_CHARS its asides in parentheses and its
    examples go (tool_search shows them), never a formula's parenthesis, a clause the meaning needs,
    nor mid-word."""
    first = _ARGUMENT_END.split(" ".join(text.split()), maxsplit=1)[0].strip()
    first = re.sub(r"\s+\((?:e\.g\.|for example|default)[^()]*\)", "", first)  # examples: tool_search
    if len(first) <= ARGUMENT_CHARS:
        return first
    bare = _ASIDE.sub("", first)
    bare = re.split(r"[;,]\s+(?:e\.g\.|for example\b)", bare, maxsplit=1)[0]
    bare = re.sub(r"\s+([,;])", r"\1", bare).strip()
    return bare if bare.endswith((".", ")", '"')) else bare + "."  # a cut-off example leaves a sentence


def compact_parameters(parameters: dict[str, Any]) -> dict[str, Any]:
    """The parameters as sent to the model, without what carries no information: empty-string
    defaults, an empty `required` list, descriptions that only repeat the enum; each argument's
    description is its first clause (the `dataset` argument every data tool repeats in fewer
    words). The full texts are `Tool.details()`, which tool_search shows."""
    properties = {}
    for name, prop in parameters.get("properties", {}).items():
        prop = {k: v for k, v in prop.items() if not (k == "default" and v in ("", None))}
        if prop.get("description"):
            prop["description"] = _argument_text(name, prop)
            if not prop["description"]:
                del prop["description"]
        properties[name] = prop
    compact = {**parameters, "properties": properties}
    if not compact.get("required"):
        compact.pop("required", None)
    return compact


def make_tool(
    func: Callable[..., ToolResult],
    group: str,
    *,
    read_only: bool = True,
    keywords: list[str] | None = None,
    brief: str = "",
) -> Tool:
    """Build a Tool from a typed function. Raises at import time on a malformed tool (a bug)."""
    if group not in GROUPS:
        raise ValueError(f"unknown tool group {group!r}")
    description, param_docs = _parse_docstring(inspect.getdoc(func) or "")
    if not description:
        raise ValueError(f"tool {func.__name__} has no docstring")
    hints = typing.get_type_hints(func)
    sig = inspect.signature(func)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, param in sig.parameters.items():
        if name in _SPECIAL:
            continue
        prop = _json_type(hints.get(name, str))
        if name in param_docs:
            prop["description"] = param_docs[name]
        if param.default is inspect.Parameter.empty:
            required.append(name)
        elif param.default is not None:
            prop["default"] = param.default
        properties[name] = prop
    needs_data = "data" in sig.parameters
    multi_data = needs_data and get_origin(hints.get("data")) is dict
    if needs_data and not multi_data:
        properties = {
            "dataset": {"type": "string", "description": DATASET_DESCRIPTION},
            **properties,
        }
    parameters = {"type": "object", "properties": properties, "required": required}
    return Tool(
        func.__name__, group, func, description, parameters, needs_data, multi_data, read_only, keywords or [], brief
    )


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into the description and per-argument texts."""
    match = re.search(r"^(?:Args|Arguments):\s*$", doc, flags=re.M)
    head, args_block = (doc[: match.start()], doc[match.end() :]) if match else (doc, "")
    params: dict[str, str] = {}
    current = None
    for line in args_block.splitlines():
        match = re.match(r"^\s{2,}(\w+)(?:\s*\([^)]*\))?:\s*(.*)$", line)
        if match:
            current = match.group(1)
            params[current] = match.group(2).strip()
        elif current and line.strip() and line.startswith(" " * 6):
            params[current] += " " + line.strip()
        elif line.strip() and not line.startswith(" "):
            break
    return head.strip(), params


def _json_type(annotation: Any) -> dict[str, Any]:
    """The JSON schema of an annotation: scalars, lists, enums (Literal) and typed objects
    (TypedDict: its fields with their own types and enums, the required ones named)."""
    if typing.is_typeddict(annotation):
        hints = typing.get_type_hints(annotation)
        properties = {key: _json_type(hint) for key, hint in hints.items()}
        required = [key for key in hints if key in annotation.__required_keys__]
        return {"type": "object", "properties": properties, **({"required": required} if required else {})}
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        non_none = [a for a in args if a is not type(None)]
        return _json_type(non_none[0]) if len(non_none) == 1 else {}
    if origin is Literal:
        if all(isinstance(a, str) for a in args):
            return {"type": "string", "enum": list(args)}
        whole = all(isinstance(a, int) and not isinstance(a, bool) for a in args)
        return {"type": "integer" if whole else "number", "enum": list(args)}
    if origin in (list, tuple):
        return {"type": "array", "items": _json_type(args[0]) if args else {}}
    if origin is dict or annotation is dict:
        return {"type": "object"}
    return {
        str: {"type": "string"},
        int: {"type": "integer"},
        float: {"type": "number"},
        bool: {"type": "boolean"},
    }.get(annotation, {})


class Registry:
    """An explicit list of tools, looked up by name."""

    def __init__(self, tools: list[Tool] | None = None):
        self._tools: dict[str, Tool] = {}
        for tool in tools or []:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"duplicate tool {tool.name}")
        self._tools[tool.name] = tool

    def extend(self, other: Registry) -> Registry:
        merged = Registry(list(self._tools.values()))
        for tool in other:
            merged.add(tool)
        return merged

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __contains__(self, name: str) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> list[str]:
        return list(self._tools)

    def run(self, name: str, data: Any = None, ctx: ToolContext | None = None, **arguments: Any) -> ToolResult:
        """Validate and call a tool. Never raises for user errors or tool bugs."""
        ctx = ctx or ToolContext()
        tool = self._tools.get(name)
        if tool is None:
            return ToolResult.failure(
                ToolError(
                    "unknown_tool",
                    f"There is no tool named {name!r}.",
                    hint="Use tool_search to find a tool.",
                    did_you_mean=suggest(name, self.names()),
                ).as_dict()
            )
        started = time.perf_counter()
        try:
            kwargs = validate_arguments(tool, arguments)
            kwargs.pop("dataset", None)
            if tool.needs_data:
                if data is None:
                    raise ToolError("no_data", "No dataset is loaded.", hint="Upload a file first.")
                if isinstance(data, pd.DataFrame):
                    check_columns(tool, data, kwargs)
                kwargs["data"] = data
            if "ctx" in inspect.signature(tool.func).parameters:
                kwargs["ctx"] = ctx
            result = tool.func(**kwargs)
        except ToolError as err:
            return ToolResult.failure(err.as_dict())
        except Exception as exc:  # a bug in a tool must not end the analysis
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            return ToolResult.failure(
                {
                    "error": "internal_error",
                    "message": f"{type(exc).__name__}: {exc}",
                    "hint": "This tool failed unexpectedly; try another method or different columns.",
                    "retryable": False,
                    "where": f"{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}",
                }
            )
        result.metrics.setdefault("duration_ms", round((time.perf_counter() - started) * 1000, 1))
        return result


def suggest(word: str, choices: list[str], limit: int = 3) -> list[str]:
    """Closest names by fuzzy match (works for zh and en names)."""
    if not choices:
        return []
    folded = {c.lower(): c for c in choices}
    matches = process.extract(str(word).lower(), list(folded), scorer=fuzz.WRatio, limit=limit, score_cutoff=55)
    return [folded[m[0]] for m in matches]


def validate_arguments(tool: Tool, arguments: dict[str, Any]) -> dict[str, Any]:
    """Check names, required arguments and types; coerce where unambiguous ("3" -> 3)."""
    props, required = tool.parameters["properties"], tool.parameters["required"]
    unknown = [k for k in arguments if k not in props]
    if unknown:
        raise ToolError(
            "invalid_arguments",
            f"Unknown argument(s) {unknown} for {tool.name}.",
            hint=f"Valid arguments: {list(props)}",
            did_you_mean=suggest(unknown[0], list(props)),
        )
    missing = [k for k in required if arguments.get(k) is None]
    if missing:
        raise ToolError(
            "invalid_arguments", f"Missing required argument(s) {missing} for {tool.name}.", hint=f"Provide {missing}."
        )
    return {k: _coerce(k, v, props[k]) for k, v in arguments.items() if v is not None}


# a JSON schema type -> the Python classes of its values
_JSON_TYPES: dict[str, type | tuple[type, ...]] = {
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "string": str,
    "array": list,
    "object": dict,
}


def _coerce(name: str, value: Any, prop: dict[str, Any]) -> Any:
    kind = prop.get("type")
    try:
        if kind == "integer" and not isinstance(value, bool):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            elif isinstance(value, str):
                value = int(float(value.strip()))
        elif kind == "number" and isinstance(value, str):
            value = float(value.strip())
        elif kind == "boolean" and isinstance(value, str):
            low = value.strip().lower()
            if low not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(value)
            value = low in ("true", "1", "yes")
        elif kind == "array" and not isinstance(value, list):
            if isinstance(value, str):
                stripped = value.strip()
                value = (
                    json.loads(stripped)
                    if stripped.startswith("[")
                    else [s.strip() for s in stripped.split(",") if s.strip()]
                )
            else:
                value = [value]
        elif kind == "string" and isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
    except (ValueError, json.JSONDecodeError):
        raise ToolError(
            "invalid_arguments", f"Argument {name!r} should be {kind}, got {value!r}.", hint=f"Pass {name} as a {kind}."
        ) from None
    expected = _JSON_TYPES.get(kind) if kind is not None else None
    if expected and (not isinstance(value, expected) or (kind in ("integer", "number") and isinstance(value, bool))):
        raise ToolError(
            "invalid_arguments", f"Argument {name!r} should be {kind}, got {value!r}.", hint=f"Pass {name} as a {kind}."
        )
    if "enum" in prop and value not in prop["enum"]:
        raise ToolError(
            "invalid_arguments",
            f"Argument {name!r} must be one of {prop['enum']}, got {value!r}.",
            hint=f"Use one of {prop['enum']}.",
            did_you_mean=suggest(str(value), [str(e) for e in prop["enum"]]),
        )
    return value


def is_column_argument(name: str) -> bool:
    return name in ("column", "columns") or name.endswith("_column") or name.endswith("_columns")


def check_columns(tool: Tool, df: pd.DataFrame, kwargs: dict[str, Any]) -> None:
    available = [str(c) for c in df.columns]
    for name, value in kwargs.items():
        if not is_column_argument(name):
            continue
        for column in value if isinstance(value, list) else [value]:
            if str(column) not in available:
                raise ToolError(
                    "column_not_found",
                    f"Column {column!r} does not exist.",
                    column=column,
                    hint="Retry with one of the available columns.",
                    did_you_mean=suggest(str(column), available),
                    available=available[:60],
                )
