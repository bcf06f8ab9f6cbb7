"""Redaction: secrets and ``<private>`` blocks never reach the store.

Runs on every event's data before anything is written. Each pattern has literal triggers;
a pattern runs only when one of its triggers occurs in the (lowercased) text, found with
plain substring search. Clean text, the common case, therefore costs a few substring scans
rather than a regex pass. Each match is replaced by a marker naming what was removed.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from memvault import jsontext

# (name, lowercase triggers, pattern). A pattern can only match where a trigger occurs.
_RULES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("private", ("<private>",), r"(?i:<private>)[\s\S]*?(?i:</private>)"),
    (
        "private_key",
        ("private key-----",),
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?"
        r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----",
    ),
    ("anthropic_key", ("sk-ant-",), r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
    ("openai_key", ("sk-",), r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    (
        "github_token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
    ),
    ("aws_access_key", ("akia", "asia"), r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("slack_token", ("xox",), r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
    ("google_api_key", ("aiza",), r"\bAIza[0-9A-Za-z_\-]{35}"),
    ("stripe_key", ("_live_",), r"\b(?:sk|rk)_live_[A-Za-z0-9]{16,}"),
    ("jwt", ("eyj",), r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    ("bearer", ("bearer ",), r"(?i:(?<=bearer ))[A-Za-z0-9._~+/\-]{16,}=*"),
    # scheme://user:password@host: the password in a connection string or URL.
    ("url_password", ("://",), r"(?P<keep>\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:)[^\s@/]+(?=@)"),
    # key = value, key: "value" …: the key stays, the value goes.
    (
        "secret",
        ("key", "secret", "token", "passw"),
        r"(?P<keep>(?i:(?<![A-Za-z0-9])(?:api[_-]?key|secret[_-]?key|client[_-]?secret"
        r"|access[_-]?token|auth[_-]?token|password|passwd))[\"']?\s*[:=]\s*[\"']?)"
        r"[^\s\"',;]{6,}",
    ),
)

_COMPILED = tuple((f"[REDACTED:{name}]", re.compile(pattern)) for name, _, pattern in _RULES)
_TRIGGERS = tuple((trigger, index) for index, rule in enumerate(_RULES) for trigger in rule[1])
_TRIGGER_WORDS = tuple(dict.fromkeys(trigger for trigger, _ in _TRIGGERS))


def redact_text(text: str) -> str:
    lowered = text.lower()
    hits = [index for trigger, index in _TRIGGERS if trigger in lowered]
    for index in sorted(set(hits)):
        marker, pattern = _COMPILED[index]
        if "keep" in pattern.groupindex:
            text = pattern.sub(lambda m, mk=marker: m.group("keep") + mk, text)
        else:
            text = pattern.sub(marker, text)
    return text


def redact_json(value: Any) -> tuple[Any, str]:
    """Redact a JSON value; returns the redacted value and its JSON text.

    The triggers are looked for once in the serialized text (cheap, and escapes cannot hide
    a trigger). Only when one occurs are the strings themselves redacted, decoded, so that a
    secret after a newline or a quote is found as surely as one after a space.
    """
    text = jsontext.dumps(value)
    lowered = text.lower()
    if not [trigger for trigger in _TRIGGER_WORDS if trigger in lowered]:
        return value, text
    redacted = redact(value)
    return redacted, jsontext.dumps(redacted)


@functools.lru_cache(maxsize=4096)
def redact_path(path: str) -> str:
    """``redact_text`` for values that repeat on every event of a session (cwd, project)."""
    return redact_text(path)


# Object keys whose string value is a secret in itself: {"password": "…"}.
_SECRET_KEY = re.compile(
    r"(?:api[_-]?key|secret(?:[_-]?key)?|client[_-]?secret|(?:access|auth|refresh)?[_-]?token"
    r"|password|passwd)",
    re.IGNORECASE,
)


def redact(value: Any) -> Any:
    """A copy of ``value`` (any JSON value) with every string redacted."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {
            key: "[REDACTED:secret]"
            if isinstance(item, str) and item and _SECRET_KEY.fullmatch(str(key))
            else redact(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [redact(item) for item in value]
    return value
