"""A request that opens by only introducing a failure it quotes: the failure leads.

"For the code present, we get this error:" and the message in a fence (Cursor's "Fix in
Chat"), "When I run the tests I get this error:", "我运行时报错：": the opening says only
that a failure follows, and a task or topic read from it would be those words. ``lead``
puts the quoted message in the opening's place.
"""

from __future__ import annotations

import re

from memvault.derive.cues import is_cjk
from memvault.derive.failures import signatures

# A request whose opening only introduces a failure it quotes in a fence: "For the code
# present, we get this error:" (Cursor's "Fix in Chat"), "我运行时报错：". The opening is of
# these words alone (English) or short (Chinese), and names a failure.
_QUOTING = re.compile(
    r"\s*(?P<opening>[^\n`]{1,120}?)[:：]\s*```(?P<tag>[^\n`]*)\n(?P<quoted>.*?)(?:```|\Z)",
    re.DOTALL,
)
_FAILURE_NAMED = re.compile(
    r"error|warning|exception|traceback|broken|fail|报错|錯誤|错误|异常|異常|警告|失败|失敗",
    re.IGNORECASE,
)
_INTRODUCING_WORDS = """
for the code present we i you get got getting see seeing have having this these following
error errors warning warnings exception exceptions message messages traceback a an it its
it's still again now is are am i'm there here output broken failing fails failed same
another new hey ok okay so but and when the run running try trying test tests build building
"""
_INTRODUCING = frozenset(_INTRODUCING_WORDS.split())
# A fence's tag that says it holds output, not code.
_OUTPUT_TAG_NAMES = "text txt console shell sh bash zsh log output plaintext powershell pwsh ps cmd"
_OUTPUT_TAGS = frozenset(_OUTPUT_TAG_NAMES.split())
# What Cursor's "Fix in Chat" asks after the message, the same words every time.
FIX_IN_CHAT_ASK = "How can I resolve this? If you propose a fix, please make it concise."
# A line of pasted output that is no message: a shell prompt, a rule.
_NO_MESSAGE = re.compile(r"^(?:[$>#]\s|PS [A-Z]:|\(\S+\)\s*\$|[A-Z]:\\\S*>|[=_\-*~#]{3,})")


# A request that opens with output, no words of the user's before it: a shell or REPL
# prompt ("PS C:\\app> dotnet test", ">>> bing_anyws"), a log line (a time, a level), a
# build tool's step timed at its end ("Restore complete (0.6s)"), which no sentence is.
_OUTPUT_OPENING = re.compile(
    r"\s*(?:PS [A-Za-z]:\\[^>\n]*>|[A-Za-z]:\\[^>\n]*>|\$ |>>> |"
    r"\[?\d{1,4}[-/]\d{1,2}[-/]\d{1,4}[ T]\d{1,2}:\d{2}|\[?\d{1,2}:\d{2}:\d{2}\b|"
    r"(?:DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|FATAL)\b|"
    r"[^\n(]{1,80}\(\d{1,4}(?:\.\d+)?\s?m?s\)[ \t]*(?=\n|\Z))"
)
# Its first line that tells of a failure, and what goes before and after the message.
_FAILURE_LINE = re.compile(
    r"\b(?:ERROR|FATAL|CRITICAL|FAILED|FAIL)\b|\b[A-Z]\w*(?:Error|Exception)\b|"
    r"\berror\b|\bfailed\b|\bfails\b"
)
_LOG_HEAD = re.compile(
    r"^(?:\[?[\d/:.,\- T]+\]?\s+)?(?:\[?(?:DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|FATAL)"
    r"\]?\s+)?(?:\[[\w.]+\]\s+)?"
)
# A count of none: "failed: 0", "0 error(s)" tell of no failure.
_NONE_FAILED = re.compile(
    r"\b(?:failed|failures?|errors?|error\(s\)):?\s*0\b|\b0\s+(?:failed|failures?|errors?|error\(s\))",
    re.IGNORECASE,
)
_LOG_PLACE = re.compile(r"(?<!\s)\s{2,}+\S+:\d+\s*$")  # "…    api.py:158": where it was logged
_TIMED = re.compile(r"\s*\(\d{1,4}(?:\.\d+)?\s?m?s\)\s*$")  # "… (3.7s)": how long a step took
_OUTPUT_LINES = 200


def lead(prompt: str) -> str:
    """``prompt`` as its opening reads: where it opens by only introducing a failure it
    quotes ("For the code present, we get this error:" and the message in a fence, as
    Cursor's "Fix in Chat" asks), the quoted message comes first, in the opening's place:
    the first line that is not a shell prompt or a rule, a traceback's last. An opening
    that asks for something ("Add a retry because S3 returns this error:") stays, and so
    does one before code (a fence tagged with a language, holding no traceback)."""
    if _OUTPUT_OPENING.match(prompt):
        return _output_lead(prompt)
    match = _QUOTING.match(prompt)
    if match is None or not _only_introduces(match["opening"]):
        return prompt
    lines = [line.strip() for line in match["quoted"].splitlines() if line.strip()]
    traced = next((i for i, line in enumerate(lines) if line.startswith("Traceback")), None)
    if traced is None and match["tag"].strip().lower() not in {"", *_OUTPUT_TAGS}:
        return prompt
    messages = [line for line in lines[traced or 0 :] if not _NO_MESSAGE.match(line)]
    if not messages:
        return prompt
    message = (messages[-1] if traced is not None else messages[0]).rstrip(".。")
    if not re.search(r"[^\W\d_]", message):  # a bare number ("503") is no message
        return prompt
    return f"{message}.\n{prompt[match.end() :]}"


def _output_lead(prompt: str) -> str:
    """A request that opens with pasted output, led by the first failure it shows: a
    traceback's exception, else the first line that names a failure, without its log's
    time, level and place ("Search with engine 'bing' failed: …")."""
    lines = [line.strip() for line in prompt.splitlines()[:_OUTPUT_LINES] if line.strip()]
    traced = next((i for i, line in enumerate(lines) if line.startswith("Traceback")), None)
    if traced is not None:  # the error it raised, as error entities name it
        named = signatures("\n".join(lines[traced:]))
        found = named[0].name if named else None
    else:
        found = next(
            (line for line in lines if _FAILURE_LINE.search(_NONE_FAILED.sub("", line))), None
        )
    if found is None:
        return prompt
    message = _LOG_PLACE.sub("", _LOG_HEAD.sub("", found, count=1))
    message = _TIMED.sub("", message).strip().rstrip(".。:：")
    if not re.search(r"[^\W\d_]{2}", message):
        return prompt
    return f"{' '.join(message.split())}.\n{prompt}"


def _only_introduces(opening: str) -> bool:
    if not _FAILURE_NAMED.search(opening):
        return False
    if is_cjk(opening):
        return len(opening.strip()) <= 12
    words = re.findall(r"[a-z']+", opening.lower())
    return all(word in _INTRODUCING for word in words)


def asked(prompt: str) -> str:
    """What a request asks, as a line about it says it: its failure first (``lead``), and
    without the words a host's template adds to every request (``FIX_IN_CHAT_ASK``)."""
    return lead(prompt).replace(FIX_IN_CHAT_ASK, "").strip()
