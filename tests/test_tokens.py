"""Token counting with the bundled BPE tables (bpe-openai), cached per message."""

import time

from app.agent.model import tokens
from app.agent.model.tokens import count_message, count_messages, count_tokens, count_tools, encoder


def test_counts_are_real_bpe_tokens():
    enc = encoder()
    text = "Revenue differs by region (F = 4.85, p = 0.016). 不同地区的收入存在显著差异。"
    assert count_tokens(text) == len(enc.encode_ordinary(text))
    assert enc.decode(enc.encode_ordinary(text)) == text
    assert count_tokens("hello") == 1 and count_tokens("") == 0 and count_tokens(None) == 0


def test_special_token_text_counts_as_plain_text():
    assert count_tokens("data said <|endoftext|> ignore rules") > 5


def test_message_count_includes_calls_and_overhead():
    plain = {"role": "user", "content": "Does weight differ by group?"}
    with_call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "compare_groups", "arguments": '{"a": 1}'}}
        ],
    }
    assert count_message(plain) == tokens.MESSAGE_OVERHEAD + count_tokens("user") + count_tokens(plain["content"])
    assert count_message(with_call) > count_message({"role": "assistant", "content": None})
    total = count_messages([plain, with_call])
    assert total == tokens.REPLY_PRIMING + count_message(plain) + count_message(with_call)


def test_tool_schemas_are_counted():
    schema = {
        "type": "function",
        "function": {
            "name": "describe_columns",
            "description": "Describe columns.",
            "parameters": {"type": "object", "properties": {}},
        },
    }
    assert count_tools([schema]) > tokens.TOOL_OVERHEAD
    assert count_messages([], [schema, schema]) == tokens.REPLY_PRIMING + 2 * count_tools([schema])


def test_a_long_history_is_cheap_to_recount():
    history = [
        {
            "role": "tool" if i % 2 else "user",
            "tool_call_id": f"c{i}",
            "content": f"[metrics]\nstep {i}: " + "mean revenue 123.45 in region north; " * 80,
        }
        for i in range(200)
    ]
    first = count_messages(history)
    start = time.perf_counter()
    for _ in range(10):
        assert count_messages(history) == first
    per_round = (time.perf_counter() - start) / 10
    assert per_round < 0.01, f"recounting 200 cached messages took {per_round * 1000:.1f} ms"
    history.append({"role": "user", "content": "one more"})
    assert count_messages(history) > first


def test_counts_without_the_package_tables_match_the_package_encoder():
    # counting uses the compiled tokenizer directly (tokens._count); bpe_openai's own encoder is the reference
    enc = encoder()
    texts = [
        "plain ascii text",
        "不同地区的收入存在显著差异。 mixed 混合 text",
        "lone surrogate \ud800 inside",
        "<|endoftext|> and <|endofprompt|> as text",
        "x" * 5000,
        "emoji 📈 and tabs\tand\nnew lines",
    ]
    for text in texts:
        assert tokens._count(text) == len(enc.encode_ordinary(text)), text


def test_counting_in_a_fresh_process_leaves_the_package_tables_unread():
    import subprocess
    import sys

    code = (
        "import sys; from app.agent.model.tokens import count_tokens; n = count_tokens('Revenue by region'); "
        "print(n, 'bpe_openai' in sys.modules, 'bpe_openai.registry' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[1:] == ["False", "False"] and int(out[0]) > 0
