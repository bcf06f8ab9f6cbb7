"""Redaction: secrets and ``<private>`` blocks never reach the store.

Runs on every event's data, cwd and project before anything is written. Two kinds of rule,
each replacing what it finds by a marker naming what was removed:

- Patterns, for secrets any text may hold (API keys, tokens, ``password = …``, private keys,
  ``<private>`` blocks). Each has literal triggers: it runs only when one of them occurs in
  the lowercased text, found with plain substring search, so clean text costs a few
  substring scans rather than a regex pass.
- The secrets this server was configured with (its bearer secret, the LLM and embedding API
  keys), removed as literal strings wherever they occur. A secret shorter than
  ``MIN_SECRET_LENGTH`` is not looked for: it would turn common words into markers, and it
  is too short to be worth guessing anyway.

Every rule is linear in its input, because an event is attacker-sized text. Each pattern
starts with a literal, so the regex engine jumps from candidate to candidate; no quantifier
can give back what it took (they stop at a character outside their class, or are
possessive); and where a failed attempt would be retried inside the same run of characters,
the pattern swallows the run instead (``skip``). Blocks (``<private>``, private keys) are
found by a scanner: an opener with no closer is redacted to the end of the string, so a
block never leaks because its end was cut off.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memvault import jsontext

log = logging.getLogger(__name__)

MIN_SECRET_LENGTH = 8


def _lowered(text: str) -> str:
    """``text.lower()`` with one character per character, so its offsets are the text's.

    U+0130 is the one character whose lowercase is two; the regex engine's own
    case-insensitive matching takes it for ``i``, and so does this.
    """
    lowered = text.lower()
    if len(lowered) != len(text):
        lowered = text.replace("\u0130", "i").lower()
        if len(lowered) != len(text):  # a character Unicode may yet give a longer lowercase
            lowered = text.translate(_ASCII_LOWER)
    return lowered


_ASCII_LOWER = {code: code + 32 for code in range(ord("A"), ord("Z") + 1)}


def _spliced(text: str, pieces: list[str], last: int) -> str:
    """``text`` with its pieces up to ``last`` replaced by ``pieces`` (itself when none)."""
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


@dataclass(frozen=True, slots=True)
class _Pattern:
    """A regex rule. It replaces its ``secret`` group, or the whole match when it has none,
    and leaves a match alone where its ``skip`` group took part. ``lowered`` patterns are
    written in lowercase and run on the lowercased text: the case-insensitive ones."""

    name: str
    triggers: tuple[str, ...]
    regex: re.Pattern[str]
    lowered: bool = False

    def apply(self, text: str, lowered: str) -> str:
        marker = f"[REDACTED:{self.name}]"
        groups = self.regex.groupindex
        part = "secret" if "secret" in groups else 0
        skip = "skip" in groups
        pieces: list[str] = []
        last = 0
        for match in self.regex.finditer(lowered if self.lowered else text):
            if skip and match.start("skip") >= 0:
                continue
            start, end = match.span(part)
            pieces += (text[last:start], marker)
            last = end
        return _spliced(text, pieces, last)


@dataclass(frozen=True, slots=True)
class _Block:
    """An opener, the first closer after it, and everything between. With no closer, the
    block runs to the end of the string."""

    name: str
    triggers: tuple[str, ...]
    opener: re.Pattern[str]
    closer: re.Pattern[str]
    lowered: bool = False

    def apply(self, text: str, lowered: str) -> str:
        marker = f"[REDACTED:{self.name}]"
        searched = lowered if self.lowered else text
        pieces: list[str] = []
        last = 0
        while opened := self.opener.search(searched, last):
            pieces += (text[last : opened.start()], marker)
            closed = self.closer.search(searched, opened.end())
            if closed is None:
                return "".join(pieces)
            last = closed.end()
        return _spliced(text, pieces, last)


@dataclass(frozen=True, slots=True)
class _Literal:
    """One configured secret, found as is. ``escaped`` is how it reads inside JSON text."""

    value: str
    marker: str
    escaped: str

    def apply(self, text: str, lowered: str = "") -> str:
        return text.replace(self.value, self.marker)


def _token(name: str, prefix: str, rest: str, trigger: str | None = None) -> _Pattern:
    """A token that starts a word with a literal ``prefix``. The ``\\b`` before the prefix
    is checked by a lookbehind after it, so that the pattern still starts with a literal."""
    literal = re.escape(prefix)
    regex = re.compile(rf"{literal}(?<!\w{literal}){rest}")
    return _Pattern(name, (trigger or prefix.lower(),), regex)


_TOKEN = r"[A-Za-z0-9_\-]"
_JWT_PART = rf"{_TOKEN}{{8,}}+"
# key = value, key: "value" …: the key stays, the value goes (unless it is already a marker).
_ASSIGNED = r"[\"']?+\s*+[:=]\s*+[\"']?+(?!\[redacted:)(?P<secret>[^\s\"',;]{6,})"


def _assignment(word: str, rest: str, trigger: str) -> _Pattern:
    regex = re.compile(rf"{word}(?<![a-z0-9]{word}){rest}{_ASSIGNED}")
    return _Pattern("secret", (trigger,), regex, lowered=True)


_RULES: tuple[_Pattern | _Block, ...] = (
    _Block(
        "private",
        ("<private>",),
        re.compile(re.escape("<private>")),
        re.compile(re.escape("</private>")),
        lowered=True,
    ),
    _Block(
        "private_key",
        ("private key-----",),
        re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"),
        re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----"),
    ),
    _token("anthropic_key", "sk-ant-", r"[A-Za-z0-9_\-]{20,}", trigger="sk-"),
    _token("openai_key", "sk-", r"(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    _Pattern(
        "github_token",
        ("gh",),  # one scan for a short word is cheaper than six for the prefixes
        re.compile(
            r"gh(?:[pousr]_(?<!\wgh[pousr]_)[A-Za-z0-9]{30,}"
            r"|ithub_pat_(?<!\wgithub_pat_)[A-Za-z0-9_]{22,})"
        ),
    ),
    _token("aws_access_key", "AKIA", r"[0-9A-Z]{16}\b"),
    _token("aws_access_key", "ASIA", r"[0-9A-Z]{16}\b"),
    _Pattern(
        "slack_token",
        ("xox",),
        re.compile(r"xox[abposr]-(?<!\wxox[abposr]-)[A-Za-z0-9\-]{10,}"),
    ),
    _token("google_api_key", "AIza", r"[0-9A-Za-z_\-]{35}"),
    _token("stripe_key", "sk_live_", r"[A-Za-z0-9]{16,}", trigger="k_live_"),
    _token("stripe_key", "rk_live_", r"[A-Za-z0-9]{16,}", trigger="k_live_"),
    # Three dot-separated parts. When a run of token characters that is not one holds another
    # "eyJ" start ("-eyJ"), the rest of the run is skipped: that start would fail the same way.
    _token(
        "jwt",
        "eyJ",
        rf"(?:{_JWT_PART}\.eyJ{_JWT_PART}\.{_JWT_PART}|(?P<skip>{_TOKEN}*?-eyJ{_TOKEN}*+))",
    ),
    _Pattern(
        "bearer",
        ("bearer ",),
        re.compile(r"bearer (?P<secret>[a-z0-9._~+/\-]{16,}=*)"),
        lowered=True,
    ),
    # scheme://user:password@host: the password in a connection string or URL.
    _Pattern(
        "url_password",
        ("://",),
        re.compile(r"://(?<=[A-Za-z0-9+.\-]://)[^\s:/@]++:(?P<secret>[^\s@/]++)(?=@)"),
    ),
    # One pattern per word, so that each starts with a literal.
    _assignment("api", "[_-]?key", "api"),
    _assignment("secret", "[_-]?key", "secret"),
    _assignment("client", "[_-]?secret", "secret"),
    _assignment("access", "[_-]?token", "token"),
    _assignment("auth", "[_-]?token", "token"),
    _assignment("passw", "(?:ord|d)", "passw"),
)

# Object keys whose string value is a secret in itself: {"password": "…"}.
_SECRET_KEY = re.compile(
    r"(?:api[_-]?key|secret(?:[_-]?key)?|client[_-]?secret|(?:access|auth|refresh)?[_-]?token"
    r"|password|passwd)",
    re.IGNORECASE,
)
_SECRET_KEY_TRIGGERS = ("key", "secret", "token", "passw")

_Rule = _Literal | _Pattern | _Block


class Redactor:
    """Redaction with every pattern, and the configured secrets as literals.

    ``secrets`` maps a marker name to a secret (``{"memvault_secret": "…"}``); missing
    values and values shorter than ``MIN_SECRET_LENGTH`` are left out. When one secret
    contains another, the longer goes first, so it is removed whole.
    """

    def __init__(self, secrets: Mapping[str, str | None] | None = None) -> None:
        named: dict[str, str] = {}
        for name, value in (secrets or {}).items():
            if not value:
                continue
            if len(value) < MIN_SECRET_LENGTH:
                log.warning(
                    "%s is shorter than %d characters, so events are not searched for it",
                    name,
                    MIN_SECRET_LENGTH,
                )
                continue
            named.setdefault(value, name)
        self._literals = tuple(
            _Literal(value, f"[REDACTED:{name}]", jsontext.dumps(value)[1:-1])
            for value, name in sorted(named.items(), key=lambda item: -len(item[0]))
        )
        self._all: tuple[_Rule, ...] = (*self._literals, *_RULES)
        # What to look for in an event's JSON text to know which rules can match in it.
        self._escaped = tuple((rule.escaped, i) for i, rule in enumerate(self._literals))
        triggers: dict[str, list[int]] = {}
        for i, rule in enumerate(self._all):
            for trigger in () if isinstance(rule, _Literal) else rule.triggers:
                triggers.setdefault(trigger, []).append(i)
        self._triggers = tuple(triggers.items())
        # cwd and project repeat on every event of a session.
        self.redact_path = functools.lru_cache(maxsize=4096)(self.redact_text)

    def redact_text(self, text: str) -> str:
        return _apply(text, self._all)

    def redact(self, value: Any) -> Any:
        """A copy of ``value`` (any JSON value) with every string redacted."""
        return _redact_value(value, self._all, keys=True)

    def redact_json(self, value: Any, text: str | None = None) -> tuple[Any, str]:
        """Redact a JSON value; returns the redacted value and its JSON text.

        ``text``, when given, is ``value``'s JSON text already made. The triggers and the
        secrets' escaped forms are looked for once in it (cheap, and escapes cannot hide a
        trigger). Only the rules found there run, on the strings themselves, decoded, so
        that a secret after a newline or a quote is found as surely as one after a space.
        """
        if text is None:
            text = jsontext.dumps(value)
        lowered = _lowered(text)
        found = [i for escaped, i in self._escaped if escaped in text]
        for trigger, rules in self._triggers:
            if trigger in lowered:
                found += rules
        keys = any(trigger in lowered for trigger in _SECRET_KEY_TRIGGERS)
        if not found and not keys:
            return value, text
        redacted = _redact_value(value, [self._all[i] for i in sorted(set(found))], keys=keys)
        return redacted, jsontext.dumps(redacted)


def _apply(text: str, rules: Sequence[_Rule]) -> str:
    lowered: str | None = None
    found: dict[str, bool] = {}  # trigger → in lowered; rules share triggers
    for rule in rules:
        if isinstance(rule, _Literal):
            if rule.value in text:
                text, lowered = rule.apply(text), None
            continue
        if lowered is None:
            lowered, found = _lowered(text), {}
        for trigger in rule.triggers:
            hit = found.get(trigger)
            if hit is None:
                hit = found[trigger] = trigger in lowered
            if hit:
                redacted = rule.apply(text, lowered)
                if redacted is not text:
                    text, lowered = redacted, None
                break
    return text


def _redact_value(value: Any, rules: Sequence[_Rule], *, keys: bool) -> Any:
    if isinstance(value, str):
        return _apply(value, rules) if rules else value
    if isinstance(value, dict):
        copy: dict[str, Any] = {}
        for key, item in value.items():
            name = _apply(key, rules) if rules and isinstance(key, str) else key
            if name in copy:  # two keys that differ only in a secret: keep both
                name = _unused(copy, name)
            if keys and isinstance(item, str) and item and _SECRET_KEY.fullmatch(str(key)):
                copy[name] = "[REDACTED:secret]"
            else:
                copy[name] = _redact_value(item, rules, keys=keys)
        return copy
    if isinstance(value, list):
        return [_redact_value(item, rules, keys=keys) for item in value]
    return value


def _unused(taken: Mapping[str, Any], name: str) -> str:
    n = 2
    while f"{name} ({n})" in taken:
        n += 1
    return f"{name} ({n})"


# Patterns only: for callers that have no configured secrets to add.
_PATTERNS = Redactor()


def redact_text(text: str) -> str:
    return _PATTERNS.redact_text(text)


def redact_json(value: Any, text: str | None = None) -> tuple[Any, str]:
    return _PATTERNS.redact_json(value, text)


def redact_path(path: str) -> str:
    return _PATTERNS.redact_path(path)


def redact(value: Any) -> Any:
    """A copy of ``value`` (any JSON value) with every string redacted."""
    return _PATTERNS.redact(value)
