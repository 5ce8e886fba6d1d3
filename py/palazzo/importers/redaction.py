"""Secrets taken out of text before it is kept: what ``palazzo hook --redact`` does to a
session's messages (an assistant's transcript holds whatever went through the terminal:
keys pasted into prompts, tokens printed by tools).

:func:`redact` replaces every match of :data:`PATTERNS` (API keys and tokens of the common
services by their documented prefixes and shapes, private-key blocks, and the value of an
assignment to a name that says it is a secret) with ``[redacted: KIND]``; the same text is
redacted the same way every time, so a message saved again is recognised as the same
message. :func:`redact_plan` does it to every message and title an importer planned.
"""

from __future__ import annotations

import re
from typing import Any

# (kind, pattern); the first group, when there is one, is what is replaced (else the whole).
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private key", re.compile(
        r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----.*?"
        r"(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----|\Z)", re.S)),
    ("anthropic key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}")),
    # (a key has digits: "sk-learn-compatible-estimators" is prose)
    ("openai key", re.compile(
        r"\bsk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z_\-]{0,60}\d)[A-Za-z0-9_\-]{20,}")),
    ("github token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("aws key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("slack token", re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}")),
    ("google api key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")),
    ("stripe key", re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}")),
    ("bearer token", re.compile(r"\bBearer\s+([A-Za-z0-9._~+/\-]{16,}=*)")),
    # The value given to a name that says it is a secret (DB_PASSWORD=…, "api_key": "…",
    # X-Api-Key: …): the name's parts bounded (no backtracking over long words), the value
    # not all digits (MAX_TOKENS: 4096) and not a replacement already made.
    ("secret", re.compile(
        r"(?i)(?<![A-Za-z0-9])(?:[A-Z0-9]{1,20}[_\-]){0,3}"
        r"(?:PASSWORD|PASSWD|SECRET|TOKEN|API[_\-]?KEY|ACCESS[_\-]?KEY|AUTH[_\-]?TOKEN)"
        r"(?:[_\-][A-Z0-9]{1,20}){0,2}[\"']?\s{0,4}[:=]\s{0,4}[\"']?"
        r"(?![0-9]+(?:[\s\"',;]|$))(?!\[redacted)([^\s\"'\[\],;]{8,})")),
)


def redact(text: str) -> tuple[str, int]:
    """Return ``text`` with every secret :data:`PATTERNS` finds replaced by ``[redacted:
    KIND]``, and how many were. Cost: one pass a pattern."""
    count = 0
    for kind, pattern in PATTERNS:
        def swap(m: re.Match[str], kind: str = kind) -> str:
            nonlocal count
            count += 1
            if m.re.groups:
                start, end = m.span(1)
                whole = m.group(0)
                return whole[:start - m.start()] + f"[redacted: {kind}]" + \
                    whole[end - m.start():]
            return f"[redacted: {kind}]"
        text = pattern.sub(swap, text)
    return text, count


def redact_plan(plan: Any) -> int:
    """Redact, in place, the text of every message of the plan's ``import_conversation``
    calls and every room description (a conversation's title); return how many secrets
    were taken out. Cost: :func:`redact` over the plan's text."""
    count = 0
    for call in plan.calls:
        if call.name == "import_conversation":
            for m in call.args.get("messages", []):
                if isinstance(m.get("content"), str):
                    m["content"], n = redact(m["content"])
                    count += n
        elif call.name == "add_room" and isinstance(call.args.get("description"), str):
            call.args["description"], n = redact(call.args["description"])
            count += n
    return count
