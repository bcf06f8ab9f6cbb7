"""The words memvault writes for agents and people to read, in each language it speaks.

``MEMVAULT_LANGUAGE`` picks one (``zh-Hant``, ``zh-Hans`` or ``en``); without it the user's
locale decides (:func:`from_locale`: ``zh_TW``/``zh_HK`` Traditional, ``zh_CN``/``zh_SG``
Simplified, anything else English). Each Chinese text is written out in its own script,
character for character, not converted at run time. What memvault *recognises* does not
depend on the setting: a placeholder row written in any language is a placeholder, and
trigger phrases (:mod:`memvault.triggers`) and snapshot markers such as ``[superseded]``
are understood in all of them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

# The language when nothing chooses one: neither the setting nor a Chinese locale.
DEFAULT = "en"
# The locale variables in the order POSIX reads them for messages: the first set one wins.
LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")
# Where Chinese is written in Traditional characters (Taiwan, Hong Kong, Macau); the rest
# of the Chinese-speaking world (mainland China, Singapore) writes Simplified.
_TRADITIONAL_REGIONS = frozenset({"tw", "hk", "mo"})
_SIMPLIFIED_REGIONS = frozenset({"cn", "sg"})
_LOCALE = re.compile(r"^([a-z]{2,3})(?:[_-]([a-z]{4}))?(?:[_-]([a-z]{2}))?(?:[.@]|$)", re.I)


@dataclass(frozen=True, slots=True)
class Strings:
    """Everything of one language. ``{n}`` and ``{listed}`` are filled in by the caller."""

    # The context block's report line and headings (search/context.py).
    report: str  # the report line: {n} fragments read, {listed} what they are
    relevant: str  # a fragment judged relevant to the request
    standing: str  # a fragment of the project's standing block (no request to judge by)
    nothing_yet: str  # no fragment for the standing block: none yet, or only passing remarks
    nothing_relevant: str  # memory was searched; nothing passed the relevance floor
    nothing_new: str  # what passed it, the session was given before
    heading_fragments: str
    heading_project: str
    heading_sessions: str
    heading_activity: str
    sources_hint: str
    # The board's placeholders for a row nobody described yet (vault/board.py).
    unset_topic: str
    auto_summary: str
    manual_summary: str
    # The two report lines the rules ask for (install/rules.py).
    read_report: str
    write_report: str


# What every language keeps in English: the context block's labels and headings.
_ENGLISH_CONTEXT = {
    "relevant": "relevant",
    "standing": "project memory",
    "nothing_yet": "nothing relevant yet",
    "heading_fragments": "## Agent memory",
    "heading_project": "## Project memory",
    "heading_sessions": "## Recent sessions",
    "heading_activity": "## Related activity",
    "sources_hint": "(not enough? next: the knowledge base, then concepts, then the web)",
}
CATALOG: dict[str, Strings] = {
    # The board's placeholders as the source documents wrote them, and the report lines of
    # the fragments protocol, each written out in the script of its language.
    "zh-Hant": Strings(
        **_ENGLISH_CONTEXT,
        report="📖 agent memory：讀取 {n} 個碎片 → {listed}",
        nothing_relevant="沒有相關的碎片 (no relevant fragments)",
        nothing_new="相關的碎片已在上文 (nothing new: already given above)",
        unset_topic="未設定",
        auto_summary="sessionStart 自動註冊，尚未整理主題。",
        manual_summary="手動補註冊，已建立 session snapshot。",
        read_report="📖 agent memory：讀取 N 個碎片 → [標題 + summary → 相關/不相關]",
        write_report="📋 agent memory：本次是否有需寫入碎片？[有/無]",
    ),
    "zh-Hans": Strings(
        **_ENGLISH_CONTEXT,
        report="📖 agent memory：读取 {n} 个碎片 → {listed}",
        nothing_relevant="没有相关的碎片 (no relevant fragments)",
        nothing_new="相关的碎片已在上文 (nothing new: already given above)",
        unset_topic="未设定",
        auto_summary="sessionStart 自动注册，尚未整理主题。",
        manual_summary="手动补注册，已建立 session snapshot。",
        read_report="📖 agent memory：读取 N 个碎片 → [标题 + summary → 相关/不相关]",
        write_report="📋 agent memory：本次是否有需写入碎片？[有/无]",
    ),
    "en": Strings(
        report="📖 agent memory: read {n} fragments → {listed}",
        **_ENGLISH_CONTEXT,
        nothing_relevant="no relevant fragments",
        nothing_new="nothing new: the relevant fragments were given above",
        unset_topic="Untitled",
        auto_summary="Registered at sessionStart; no topic yet.",
        manual_summary="Registered by hand; session snapshot created.",
        read_report=(
            "📖 agent memory: read N fragments → [title + summary → relevant/not relevant]"
        ),
        write_report="📋 agent memory: anything to write as a fragment this time? [yes/no]",
    ),
}
LANGUAGES = tuple(CATALOG)


def strings(language: str = DEFAULT) -> Strings:
    """The strings of ``language``; ``ValueError`` naming the choices for another value."""
    try:
        return CATALOG[language]
    except KeyError:
        raise ValueError(
            f"unknown language {language!r}: choose one of {', '.join(LANGUAGES)}"
        ) from None


def from_locale(environ: Mapping[str, str]) -> str:
    """The language the user's locale asks for: the first of ``LC_ALL``, ``LC_MESSAGES``
    and ``LANG`` that is set decides (``zh_TW.UTF-8`` → ``zh-Hant``, ``zh_CN`` →
    ``zh-Hans``, a script tag such as ``zh_Hant_TW`` wins over the region); English for
    any other locale, ``C`` and ``POSIX`` included, and when none is set."""
    for name in LOCALE_VARIABLES:
        value = environ.get(name, "").strip()
        if value:
            return _locale_language(value)
    return DEFAULT


def _locale_language(value: str) -> str:
    found = _LOCALE.match(value)
    if found is None or found.group(1).lower() != "zh":
        return DEFAULT
    script, region = (found.group(2) or "").lower(), (found.group(3) or "").lower()
    if script in ("hant", "hans"):
        return f"zh-{script.capitalize()}"
    if region in _TRADITIONAL_REGIONS:
        return "zh-Hant"
    if region in _SIMPLIFIED_REGIONS:
        return "zh-Hans"
    return DEFAULT


def placeholder_topics() -> frozenset[str]:
    """The topic of a row nobody described yet, in every language."""
    return frozenset({"", "-", *(s.unset_topic for s in CATALOG.values())})


def placeholder_summaries() -> frozenset[str]:
    """The summary a row gets when a host registers it, in every language."""
    return frozenset(s.auto_summary for s in CATALOG.values())


def manual_summaries() -> frozenset[str]:
    """The summary a row registered by hand gets without one, in every language."""
    return frozenset(s.manual_summary for s in CATALOG.values())
