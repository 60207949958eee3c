"""Small talk: a greeting, thanks or pleasantry and nothing else, in Chinese or English."""

from __future__ import annotations

import re

# --- the rules ---------------------------------------------------------------------------------
SMALL_TALK = sorted(
    (
        "hi",
        "hello",
        "hey",
        "hiya",
        "yo",
        "good morning",
        "good afternoon",
        "good evening",
        "thanks",
        "thank you",
        "thank u",
        "thx",
        "ty",
        "cheers",
        "ok",
        "okay",
        "great",
        "cool",
        "nice",
        "awesome",
        "bye",
        "goodbye",
        "see you",
        "how are you",
        "who are you",
        "there",
        "a lot",
        "so much",
        "very much",
        "you",
        "again",
        "你好",
        "您好",
        "嗨",
        "哈喽",
        "哈啰",
        "早上好",
        "上午好",
        "下午好",
        "晚上好",
        "谢谢",
        "多谢",
        "感谢",
        "谢啦",
        "好的",
        "好",
        "收到",
        "明白",
        "了解",
        "再见",
        "拜拜",
        "辛苦了",
        "你是谁",
        "在吗",
        "你",
        "您",
        "呀",
        "啊",
        "哦",
        "啦",
        "了",
        "非常",
        "太",
        "大家",
    ),
    key=len,
    reverse=True,
)


_PUNCT = re.compile(r"[\s!！。.,，~～?？:：;；、'\"“”‘’()（）\-—_*…]+|[\U0001F300-\U0001FAFF\u2600-\u27BF]")


# --- rules --------------------------------------------------------------------------------------
def is_small_talk(text: str) -> bool:
    """A greeting, thanks or pleasantry and nothing else ("你好", "thanks a lot!", "hi there")."""
    rest = _PUNCT.sub(" ", (text or "").lower()).strip()
    if not rest or len(rest) > 40:
        return False
    while rest:
        for phrase in SMALL_TALK:
            if rest.startswith(phrase) and (
                not phrase.isascii() or len(rest) == len(phrase) or not rest[len(phrase)].isalnum()
            ):
                rest = rest[len(phrase) :].strip()
                break
        else:
            return False
    return True
