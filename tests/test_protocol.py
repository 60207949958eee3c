from app.agent.model.protocol import INTERRUPTED, heal_protocol


def assistant_call(*ids):
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": i, "type": "function", "function": {"name": "t", "arguments": "{}"}} for i in ids],
    }


def tool(i):
    return {"role": "tool", "tool_call_id": i, "content": "ok"}


def assert_valid(messages):
    open_ids = set()
    for m in messages:
        if m["role"] == "tool":
            assert m["tool_call_id"] in open_ids
            open_ids.remove(m["tool_call_id"])
        else:
            assert not open_ids, "a message arrived before every tool call was answered"
            open_ids = {c["id"] for c in m.get("tool_calls") or []}
    assert not open_ids


def test_dangling_call_gets_synthetic_result():
    messages = [{"role": "user", "content": "q"}, assistant_call("a", "b"), tool("a")]
    repairs = heal_protocol(messages)
    assert_valid(messages)
    assert messages[-1] == {"role": "tool", "tool_call_id": "b", "content": INTERRUPTED}
    assert repairs == ["added synthetic result for t (b)"]


def test_dangling_call_followed_by_user_message():
    messages = [assistant_call("a"), {"role": "user", "content": "next"}]
    heal_protocol(messages)
    assert_valid(messages)
    assert [m["role"] for m in messages] == ["assistant", "tool", "user"]


def test_orphan_result_is_dropped():
    messages = [{"role": "user", "content": "q"}, tool("zz"), {"role": "assistant", "content": "hi"}]
    heal_protocol(messages)
    assert_valid(messages)
    assert all(m["role"] != "tool" for m in messages)


def test_duplicated_ids_are_dropped():
    messages = [assistant_call("a"), tool("a"), assistant_call("a"), tool("a")]
    heal_protocol(messages)
    assert_valid(messages)
    assert sum(1 for m in messages if m["role"] == "tool") == 1


def test_valid_history_is_untouched():
    messages = [{"role": "user", "content": "q"}, assistant_call("a"), tool("a"), {"role": "assistant", "content": "x"}]
    before = [dict(m) for m in messages]
    assert heal_protocol(messages) == []
    assert messages == before
