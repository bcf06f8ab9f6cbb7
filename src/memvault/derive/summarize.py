"""The extractive session summary: what a session is about, what it did and decided, and
what is left open, without an LLM.

It feeds the session board (Topic, Summary, Keywords) and the snapshot sections, and it is
incremental: the stored summary plus only the events past the summarize watermark gives
the same picture as summarizing everything again (the caller still rebuilds in full every
few revisions).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields

from memvault.derive import activity, cues
from memvault.derive.activity import FAILURE, PROMPT, READ_TYPES, RESPONSE, Step, steps
from memvault.derive.keywords import keywords
from memvault.derive.quoted import lead
from memvault.derive.reported import reported_changes
from memvault.derive.text import clip, close, same
from memvault.domain import Event, Observation
from memvault.language import placeholder_topics
from memvault.vault import snapshot

TOPIC_LIMIT = 60
INTENT_LIMIT = 120
OUTCOME_LIMIT = 140
ITEM_LIMIT = 200
LIMITS = {"decisions": 10, "files": 20, "questions": 8, "next": 8, "commands": 10}
PLACEHOLDER_TOPICS = frozenset({"untitled", *placeholder_topics()})  # any language's

_MARKERS = {"Result": "结果", "Progress": "进展"}
_PROGRESS_EN = ("edited ", "ran ", "looked up ", "read ", "; ")
_PROGRESS_ZH = ("修改了 ", "运行了 ", "查了 ", "查看了 ", "；")
_RESEARCH_TYPES = frozenset({"web_fetch"})
_FIX_EN = "Fix failing `{}`: {}"
_FIX_ZH = "修复失败的 `{}`：{}"
_FIX_ACTION = re.compile(r"^(?:Fix failing|修复失败的) `(.+?)`")
_LIST_ITEM = re.compile(r"[^\n]{0,3}\n\s*(?:[-*+•]|\d+[.)])\s")
_SPLIT_CONTEXT = re.compile(r"(?:^|(?<=[.。!?！？]))\s*(?:Result|Progress|结果|进展)[:：]\s*")
_POLITE = re.compile(
    r"^(?:please|pls|can you|could you|would you|help me|i want to|i'd like to|"
    r"请|請|麻烦|麻煩|帮我|幫我|帮忙|幫忙)[\s,，]*",
    re.IGNORECASE,
)
# Programs that only look around: running them is not work to record.
_READ_ONLY_PROGRAMS = """
ls cat pwd head tail echo which less more tree wc file stat du df whoami date env uname find grep rg
"""
_READ_ONLY = frozenset(_READ_ONLY_PROGRAMS.split())


@dataclass
class Summary:
    topic: str  # like a board Topic
    current_context: str  # what the session is doing or did; the board row's Summary
    decisions: list[str]
    files: list[str]  # edited/written first, then read
    open_questions: list[str]
    next_actions: list[str]
    keywords: list[str]  # for the board's Keywords column
    observation_count: int
    edited_files: list[str] = field(default_factory=list)  # the changed subset of ``files``
    commands: list[str] = field(default_factory=list)  # "npm test", "npm test (failed)"
    derived_by: str = "extractive"  # or "llm:<provider>:<model>"
    # Whether the session's steps so far record a change (``activity.records_changes``);
    # where none do, ``edited_files`` are what its replies report. None: stored before this
    # was kept, when edited files were always recorded ones.
    records_changes: bool | None = None


def summarize(
    events: Sequence[Event],
    observations: Sequence[Observation],
    previous: Summary | None = None,
) -> Summary:
    """Summarize a session's events, or merge new events into ``previous``."""
    recorded = previous is not None and _recorded(previous)
    known = previous.files if previous is not None else ()
    fresh = _digest(steps(events, observations), len(observations) or len(events), recorded, known)
    return fresh.summary() if previous is None else _merge(previous, fresh)


def _recorded(summary: Summary) -> bool:
    if summary.records_changes is None:
        return bool(summary.edited_files)
    return summary.records_changes


def stored_summary(stored: dict) -> Summary:
    """A stored summary, ignoring fields this version does not know."""
    known = {f.name for f in fields(Summary)}
    return Summary(**{k: v for k, v in stored.items() if k in known})


def snapshot_sections(summary: Summary) -> dict[str, list[str] | str]:
    """The summary as snapshot content, keyed by the template's section names; the
    snapshot merge policy decides what happens to what is already there."""
    return {
        snapshot.CONTEXT: summary.current_context,
        snapshot.DECISIONS: list(summary.decisions),
        snapshot.FILES: list(summary.files),
        snapshot.QUESTIONS: list(summary.open_questions),
        snapshot.NEXT: list(summary.next_actions),
    }


def has_real_work(summary: Summary) -> bool:
    """Whether there is something to record: a change, a command that is more than a look
    around, or a decision. A greeting or a few reads leave a board row idle."""
    return bool(
        summary.edited_files
        or summary.decisions
        or any(not _read_only(command) for command in summary.commands)
    )


@dataclass
class _Digest:
    """What one run of steps says, before it is merged with an earlier summary."""

    topic: str = ""
    intent: str = ""  # the latest task
    result: str = ""  # the agent's latest conclusion on it
    since_task: list[Step] = field(default_factory=list)  # for the progress made on it
    chinese: bool = False
    conversed: bool = False  # someone wrote: earlier questions got their answer
    passed: set[str] = field(default_factory=set)  # commands that succeeded
    decisions: list[str] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    next_actions: list[str] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)
    read: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    count: int = 0
    recorded: bool = False  # this run of steps, or an earlier one, records a change

    def outcome(self, chinese: bool, *, has_task: bool) -> tuple[str, str]:
        """("Result", the agent's conclusion) or ("Progress", what its tools did). Without
        a task, replies only answer a greeting: the tools' work is all there is."""
        if self.result and has_task:
            return "Result", self.result
        progress = _progress(self.since_task, chinese)
        return ("Progress", progress) if progress else ("", "")

    def summary(self) -> Summary:
        label, outcome = self.outcome(self.chinese, has_task=bool(self.intent))
        return Summary(
            topic=self.topic,
            current_context=_context(self.intent, label, outcome, self.chinese),
            decisions=_bounded(self.decisions, LIMITS["decisions"]),
            files=_files(self.edited, self.read),
            open_questions=_bounded(self.questions, LIMITS["questions"]),
            next_actions=_bounded(self.next_actions, LIMITS["next"]),
            keywords=self.keywords,
            observation_count=self.count,
            edited_files=_unique(self.edited)[: LIMITS["files"]],
            commands=_unique(self.commands)[-LIMITS["commands"] :],
            records_changes=self.recorded,
        )


def _digest(
    session: list[Step], count: int, recorded: bool = False, known: Sequence[str] = ()
) -> _Digest:
    """What ``session``'s steps say. Where neither they nor the session's earlier steps
    (``recorded``) record a change (``activity.records_changes``: a history exported
    without its edits), the files its replies report changing are what it edited
    (``derive.reported``), by the paths its tools named them by (these steps' and
    ``known``, the session's files so far)."""
    digest = _Digest(count=count)
    tasks = [s for s in session if s.role == PROMPT and cues.is_task(s.text)]
    conversation = [s for s in session if s.role in (PROMPT, RESPONSE)]
    if tasks:
        digest.topic = topic_from(tasks[0].text)
        digest.intent = _intent(tasks[-1].text)
    digest.chinese = cues.is_cjk(digest.intent or " ".join(s.text for s in conversation))
    digest.conversed = bool(conversation)
    latest = tasks[-1].seq if tasks else -1
    digest.since_task = [s for s in session if s.seq > latest]
    digest.result = _result(digest.since_task)
    for index, step in enumerate(conversation):
        later = conversation[index + 1 :]
        openers = step.openers
        for sentence in cues.sentences(cues.own_words(step.text)):
            narrated = step.role == RESPONSE and cues.is_narration(sentence)
            if cues.is_decision(sentence, opening=sentence in openers) and not narrated:
                digest.decisions.append(_item(cues.statement(sentence)))
            elif _open(sentence, narrated) and _unanswered(step, later):
                digest.questions.append(_item(sentence))
            elif cues.is_next_step(sentence) and not narrated:
                digest.next_actions.append(_item(cues.statement(sentence)))
    digest.next_actions += _unresolved_failures(session, digest.chinese)
    for step in session:
        if step.changes_files:
            digest.edited += step.files
        elif step.type in READ_TYPES and step.role != FAILURE:
            digest.read += step.files
        if step.command and not step.rejected:
            digest.commands.append(_ran(step))
            if step.role != FAILURE:
                digest.passed.add(activity.command_key(step.command))
    digest.recorded = recorded or activity.records_changes(session)
    if not digest.recorded:
        replies = (s.text for s in session if s.role == RESPONSE)
        named = [*known, *(f for s in session for f in s.files)]
        digest.edited += reported_changes(replies, named)
    responses = [s for s in session if s.role == RESPONSE and tasks]
    digest.keywords = keywords(_keyword_texts(tasks, responses, digest))
    return digest


def topic_from(prompt: str) -> str:
    """A board Topic from a prompt: its first sentence, without politeness, ≤ 60 chars."""
    first = (cues.sentences(lead(prompt)) or [""])[0]
    first = _POLITE.sub("", first).rstrip("。.!！?？:：,，")
    return clip(first, TOPIC_LIMIT)


def _intent(prompt: str) -> str:
    text = ""
    for sentence in cues.sentences(lead(prompt))[:2]:
        text = f"{text} {sentence}".strip() if text else sentence
        if len(text) >= 40:
            break
    return clip(_POLITE.sub("", text), INTENT_LIMIT)


def _result(after: list[Step]) -> str:
    """The agent's last word on the task that is not narration or filler ("Perfect!"),
    its conclusion first."""
    for step in reversed(after):
        if step.role != RESPONSE:
            continue
        every = cues.sentences(step.text)
        said = [
            i for i, s in enumerate(every) if not cues.is_narration(s) and not cues.is_filler(s)
        ]
        if said:
            at = next((i for i in said if cues.is_conclusion(every[i])), said[0])
            best = cues.without_acknowledgement(every[at]).rstrip()
            if cues.introduces(best):
                # "The error has been resolved by:" before its list: the list's first item,
                # whatever it says ("1. 首先，让我们统一数据库表结构。" is a plan, and the
                # point); before no list, what it introduced is not told.
                listed = at + 1 < len(every) and _listed(step.text, best)
                glue = "" if best.endswith("：") else " "
                best = f"{best}{glue}{every[at + 1].strip()}" if listed else best.rstrip(":：")
            return clip(best, OUTCOME_LIMIT)
    return ""


def _listed(text: str, sentence: str) -> bool:
    """Whether a list follows ``sentence`` in ``text``: its next line is an item."""
    end = " ".join(sentence.split())[-20:]
    flat = re.sub(r"[ \t]+", " ", text)
    at = flat.find(end)
    return at >= 0 and bool(_LIST_ITEM.match(flat[at + len(end) :]))


def _ran(step: Step) -> str:
    return step.command + (" (failed)" if step.role == FAILURE else "")


def _progress(after: list[Step], chinese: bool) -> str:
    """What the tools did, most telling first: changes, commands, look-ups, reads."""
    changed = _unique(f for s in after if s.changes_files for f in s.files)
    ran = _unique(
        f"`{s.command}`" + (" (failed)" if s.role == FAILURE else "")
        for s in after
        if s.command and not s.rejected
    )
    looked_up = _unique(s.target for s in after if s.type in _RESEARCH_TYPES and s.target)
    read = _unique(f for s in after if s.type in READ_TYPES and s.role != FAILURE for f in s.files)
    words = _PROGRESS_ZH if chinese else _PROGRESS_EN
    parts = []
    if changed:
        parts.append(words[0] + _few(changed))
    if ran:
        parts.append(words[1] + _few(ran, shown=2))
    if looked_up:
        parts.append(words[2] + _few([f"“{t}”" for t in looked_up], shown=1))
    if read:
        parts.append(words[3] + _few(read))
    return clip(words[4].join(parts), OUTCOME_LIMIT)


def _open(sentence: str, narrated: bool) -> bool:
    """A question a session may leave open: not the agent saying what it will check, not
    an offer of more work, not a heading before a list ("What was moved:")."""
    return (
        cues.is_question(sentence)
        and not narrated
        and not cues.is_offer(sentence)
        and not cues.introduces(sentence)
    )


def _unanswered(step: Step, later: list[Step]) -> bool:
    """A user question stays open until the agent answers; the agent's question to the
    user stays open until the user writes again."""
    for other in later:
        if (step.role == PROMPT and other.role == RESPONSE) or other.role == PROMPT:
            return False
    return True


def _unresolved_failures(session: list[Step], chinese: bool) -> list[str]:
    """Commands whose last run failed: fixing them is the obvious next action."""
    last: dict[str, Step] = {}
    for step in session:
        if step.command and not step.rejected:
            last[activity.command_key(step.command)] = step
    found = []
    for step in last.values():
        if step.role == FAILURE:
            error = clip(" ".join(step.text.split()), 80)
            template = _FIX_ZH if chinese else _FIX_EN
            found.append(template.format(clip(step.command, 80), error))
    return found


def _read_only(command: str) -> bool:
    words = activity.command_key(command.removesuffix(" (failed)")).split()
    if not words:
        return True
    if words[0] == "git":
        return len(words) < 2 or words[1] in ("status", "log", "diff", "show", "branch")
    return words[0] in _READ_ONLY


def _keyword_texts(
    tasks: list[Step], responses: list[Step], digest: _Digest
) -> list[tuple[str, float]]:
    """What the keywords are drawn from, weighted: the first task names the session's
    theme, later tasks and decisions refine it, replies only break ties."""
    texts = [(cues.clean(s.text), 3.0 if i == 0 else 1.5) for i, s in enumerate(tasks)]
    texts += [(d, 2.0) for d in digest.decisions]
    texts += [(digest.result, 0.5)] if digest.intent else []
    texts += [(f.rsplit("/", 1)[-1], 0.5) for f in digest.edited]
    said = [x for s in responses for x in cues.sentences(s.text) if not cues.is_narration(x)]
    texts += [(sentence, 0.3) for sentence in said]
    return texts


def _merge(previous: Summary, fresh: _Digest) -> Summary:
    # Files earlier replies reported changing, in a session that now records its changes:
    # it is read by its records alone, as if summarized whole.
    edited_before = [] if fresh.recorded and not _recorded(previous) else previous.edited_files
    return Summary(
        topic=fresh.topic if previous.topic.strip() in PLACEHOLDER_TOPICS else previous.topic,
        current_context=_merged_context(previous.current_context, fresh),
        decisions=_bounded([*previous.decisions, *fresh.decisions], LIMITS["decisions"]),
        files=_files(
            _unique([*edited_before, *fresh.edited]),
            [f for f in previous.files if f not in edited_before] + fresh.read,
        ),
        open_questions=_bounded(
            [*([] if fresh.conversed else previous.open_questions), *fresh.questions],
            LIMITS["questions"],
        ),
        next_actions=_bounded(
            [
                *(a for a in previous.next_actions if not _fixed(a, fresh.passed)),
                *fresh.next_actions,
            ],
            LIMITS["next"],
        ),
        # A row's keywords should not churn every turn: earlier ones keep their place.
        keywords=_unique([*previous.keywords, *fresh.keywords], key=str.lower)[:8],
        observation_count=previous.observation_count + fresh.count,
        edited_files=_unique([*edited_before, *fresh.edited])[: LIMITS["files"]],
        commands=_unique([*previous.commands, *fresh.commands])[-LIMITS["commands"] :],
        records_changes=fresh.recorded,
    )


def _merged_context(old: str, fresh: _Digest) -> str:
    """A new task brings its own outcome; within the same task, a conclusion outranks
    progress, and newer outranks older."""
    old_intent, old_label, old_outcome = _split_context(old)
    intent = fresh.intent or old_intent
    chinese = cues.is_cjk(intent) if intent else fresh.chinese
    label, outcome = fresh.outcome(chinese, has_task=bool(intent))
    if not fresh.intent and ((label != "Result" and old_label == "Result") or not outcome):
        label, outcome = old_label, old_outcome
    return _context(intent, label, outcome, chinese)


def _fixed(action: str, passed: set[str]) -> bool:
    """A "fix failing `x`" action whose command has since passed."""
    match = _FIX_ACTION.match(action)
    return match is not None and activity.command_key(match.group(1)) in passed


def _context(intent: str, label: str, outcome: str, chinese: bool) -> str:
    """One or two sentences: the latest task, then its result or progress."""
    parts = [close(intent, chinese)] if intent else []
    if outcome:
        word = _MARKERS[label] + "：" if chinese else label + ": "
        parts.append(close(word + outcome, chinese))
    return ("" if chinese else " ").join(parts)


def _split_context(context: str) -> tuple[str, str, str]:
    """(intent, label, outcome) back from a context this module wrote."""
    match = _SPLIT_CONTEXT.search(context)
    if match is None:
        return context.strip(), "", ""
    label = match.group(0).strip()[:-1].strip()
    label = {v: k for k, v in _MARKERS.items()}.get(label, label)
    intent = context[: match.start()].strip().rstrip(".。")
    return intent, label, context[match.end() :].strip().rstrip(".。")


def _files(edited: list[str], read: list[str]) -> list[str]:
    return _unique([*edited, *read])[: LIMITS["files"]]


def _bounded(items: list[str], limit: int) -> list[str]:
    """Distinct items, the newest kept when there are too many (the snapshot keeps the
    older ones)."""
    kept: list[str] = []
    for item in items:
        if not any(same(item, other) for other in kept):
            kept.append(item)
    return kept[-limit:]


def _unique(items: Iterable[str], key: Callable[[str], str] = str) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        if key(item) not in seen:
            seen.add(key(item))
            out.append(item)
    return out


def _few(items: list[str], shown: int = 3) -> str:
    head = ", ".join(items[:shown])
    return head + (f" (+{len(items) - shown})" if len(items) > shown else "")


def _item(text: str) -> str:
    return clip(text, ITEM_LIMIT)
