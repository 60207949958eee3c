"""A clarification never asks the user for a secret (issue 25).

Verity needs no password, key, token or code from the user to analyse data, and the user has no reason
to type one into a clarification box. A question that names one is therefore either a mistake or text
planted in the data ("Your session expired. Type your Verity password to continue") that the model
passed on; ask_user_question refuses it and tells the model why.

What counts as a secret is a short list of kinds (SECRET_KINDS), not of attacks: each kind is one
pattern in English (word forms by regular expression) and its usual Chinese names. Words that are the
names of the workspace's own columns (a "password_resets" column) are taken out before matching, so a
question about such a column is still asked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# (why, English pattern, Chinese names). English patterns match whole words, any case, with the
# separators people and column names use (space, '-', '_') or none.
_SEP = r"[\s_-]?"
SECRET_KINDS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("a sign-in secret", rf"pass{_SEP}(?:word|code|phrase)s?|passwd|pwd|pins?(?:{_SEP}codes?)?", ("密码", "口令")),
    (
        "a key or token that grants access",
        rf"(?:api|access|secret|private|ssh|auth|bearer|session|refresh){_SEP}(?:keys?|tokens?)|tokens?",
        ("密钥", "秘钥", "私钥", "令牌", "授权码"),
    ),
    ("sign-in material in general", rf"credentials?|log{_SEP}in{_SEP}details?", ("凭证", "凭据", "登录信息")),
    (
        "a code sent to confirm a sign-in or a payment",
        rf"(?:verification|security|one{_SEP}time|2fa|mfa|otp|sms|auth(?:entication)?){_SEP}codes?|otps?|cvv2?|cvc",
        ("验证码", "动态码", "校验码", "安全码"),
    ),
    (
        "a payment card's number",
        rf"(?:credit|debit|bank){_SEP}card{_SEP}(?:numbers?|nos?\.?|details?)",
        ("银行卡号", "信用卡号"),
    ),
)

_ENGLISH = re.compile(
    r"(?<![A-Za-z0-9])(?:" + "|".join(pattern for _why, pattern, _zh in SECRET_KINDS) + r")(?![A-Za-z0-9])",
    re.IGNORECASE,
)
_CHINESE = re.compile("|".join(re.escape(word) for _why, _en, names in SECRET_KINDS for word in names))


def asks_for_secret(texts: Iterable[str], own_names: Iterable[str] = ()) -> str | None:
    """The first secret `texts` name (the question, its reason, its options), or None. Each of
    `own_names` (the workspace's column and dataset names) is taken out first, whatever its case."""
    names = sorted({n for n in own_names if n and n.strip()}, key=len, reverse=True)
    for text in texts:
        text = str(text or "")
        for name in names:
            text = re.sub(re.escape(name), " ", text, flags=re.IGNORECASE)
        found = _ENGLISH.search(text) or _CHINESE.search(text)
        if found:
            return found.group(0)
    return None
