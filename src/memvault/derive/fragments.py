"""Fragment extraction: what a session learned that is worth keeping, as fragment drafts.

Worth keeping (fragments spec, item 5): decisions, conclusions and findings, prices and
measured data, pitfalls and lessons. Not worth keeping: reads, greetings, narration,
temporary calculations, and what was learned before: a decision recalled ("we decided
earlier…", "上次決定…"), quoted (``> …``), or read out of memory (memory tools' results,
the injected context block and the report line that opens it) is not made again. Nor is
what is left of a sentence cut in the wrong place (``use).``): a statement needs real
words (``text.substantive``). The extractor would rather miss a fragment than write noise, since
each draft becomes a file a person reads. Every draft names the events it came from
(``properties["events"]``), so a fragment can be traced back and rebuilt.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from memvault.derive import cues
from memvault.derive.activity import (
    FAILURE,
    PROMPT,
    RESPONSE,
    TOOL,
    Step,
    command_key,
    records_changes,
    steps,
)
from memvault.derive.describe import describe
from memvault.derive.quoted import lead
from memvault.derive.reported import reported_changes
from memvault.derive.text import clip, close, same, substantive
from memvault.domain import Event, Observation
from memvault.vault.remember import Draft

SUMMARY_LIMIT = 200
VALUE_LIMIT = 200
MAX_PER_KIND = 3
# How sure a statement is: confirmed when the user said it, or the user and the agent both
# did; declared when only the agent said it, once, but as a decision made ("Decision: …",
# "we decided …"); unconfirmed when only the agent said it, once, in passing.
CONFIRMED = 0.9
DECLARED = 0.8
UNCONFIRMED = 0.7


def confirmed(confidence: float | None) -> bool:
    """Whether a memory held this surely is told to agents: not an agent's passing
    statement, said once (``UNCONFIRMED``). The user said it, or both did, or the agent
    declared it as a decision made (``DECLARED``), or an LLM made it, or a person wrote it
    (no confidence of its own: ``None``)."""
    return confidence is None or float(confidence) > UNCONFIRMED


# Tools that read memory back (memvault's, agentmemory's): what they return was learned before.
_MEMORY_TOOL = re.compile(r"memvault|agentmemory|(?:^|_)memory_|(?:^|_)recall$", re.IGNORECASE)
# A price or a cost with its figure ("$20 per month", "每月 99 元").
_PRICE = re.compile(
    r"[$€£¥￥]\s?\d|\d[\d,.]*\s?(?:usd|eur|cny|rmb|dollars?|元|美元|块|塊)"
    r"|\b(?:price|pricing|costs?|per month|per year|/month|/mo)\b.*\d"
    r"|(?:价格|價格|费用|費用|报价|報價|售价|售價|每月|每年|每分钟|每分鐘).*\d",
    re.IGNORECASE,
)
# "3 * 0.008 = 0.024": working shown on the way to an answer, not the answer.
_CALCULATION = re.compile(r"\d\s*[-+*/×÷]\s*[$€£¥￥]?\s*\d[^=]*=")
# Fragments are plain text: a link keeps the words it shows ("[[a|b]]" → "b").
_WIKILINK = re.compile(r"\[\[(?:[^\]|\n]*\|)?([^\]\n]*)\]\]")
# Findings need a stronger cue than a "because" inside an explanation.
_FINDING = re.compile(
    r"\b(?:root cause|turns out|found that|confirmed|the (?:problem|issue|bug|cause|culprit) "
    r"(?:is|was)|in conclusion)\b|结论|結論|原来|原來|根因|原因是|原因在于|原因在於|问题在于|"
    r"問題在於|发现|發現",
    re.IGNORECASE,
)


@dataclass
class _Candidate:
    kind: str  # decision | lesson | finding | data
    statement: str
    steps: list[Step]
    facts: list[str] = field(default_factory=list)
    from_user: bool = False
    declared: bool = False  # a decision declared as one (``cues.declares``)
    title: str | None = None  # what it is about, for its file name (a pitfall's subject)


def extract_fragments(
    events: Sequence[Event], observations: Sequence[Observation], *, project: str
) -> list[Draft]:
    """Drafts of the fragments a session's events are worth, most important first."""
    session = steps(events, observations)
    if not session:
        return []
    chinese = cues.is_cjk(" ".join(s.text for s in session if s.role == PROMPT))
    lessons = _fixed_failures(session, chinese)
    stated = _statements(session, taken=[f for c in lessons for f in c.facts])
    drafts = [_draft(c, project) for c in [*stated["decision"], *lessons]]
    drafts += [_draft(c, project) for k in ("lesson", "finding", "data") for c in stated[k]]
    return drafts


def own_steps(events: Sequence[Event], observations: Sequence[Observation]) -> list[Step]:
    """The steps fragments are learned from: without memory tools' results, and prompts and
    replies without what they only pass on (quoted blocks, memvault's report lines and the
    context block one opens)."""
    recalled = {
        event.seq
        for event in events
        if isinstance(event.payload, dict)
        and _MEMORY_TOOL.search(
            str(event.payload.get("tool_name") or event.payload.get("toolName") or "")
        )
    }
    own = []
    for step in steps(events, observations):
        if step.seq in recalled:
            continue
        if step.role in (PROMPT, RESPONSE):
            step = replace(step, text=cues.own_words(step.text))
        own.append(step)
    return own


def _statements(session: list[Step], taken: list[str]) -> dict[str, list[_Candidate]]:
    """Decisions, lessons, findings and data stated in prompts and responses, each said
    once however often it was repeated."""
    found: dict[str, list[_Candidate]] = {k: [] for k in ("decision", "lesson", "finding", "data")}
    turns = _Turns(session)
    for step in session:
        if step.role == PROMPT and not cues.is_task(step.text):
            continue
        if step.role not in (PROMPT, RESPONSE):
            continue
        openers = step.openers
        for sentence in cues.sentences(cues.own_words(step.text)):
            kind = _kind(sentence, step.role, sentence in openers)
            if kind is None:
                continue
            statement = clip(cues.statement(sentence), VALUE_LIMIT)
            if not substantive(cues.unlabelled(statement)):
                continue  # what is left of a sentence cut in the wrong place
            if cues.says_nothing(statement) or (kind == "finding" and cues.introduces(sentence)):
                continue  # "The issue is clear now.", "…, it means:" (a list it does not carry)
            if any(same(statement, fact.split(": ", 1)[-1]) for fact in taken):
                continue
            declared = kind == "decision" and cues.declares(sentence)
            known = next((c for c in found[kind] if same(c.statement, statement)), None)
            if known is not None:
                known.steps.append(step)
                known.from_user = known.from_user or step.role == PROMPT
                known.declared = known.declared or declared
                continue
            candidate = _Candidate(
                kind, statement, [step], from_user=step.role == PROMPT, declared=declared
            )
            candidate.facts = [
                f"{kind}: {statement}",
                *_context_facts(turns, step, kind),
            ]
            found[kind].append(candidate)
    return {kind: items[:MAX_PER_KIND] for kind, items in found.items()}


def _kind(sentence: str, role: str, opening: bool = False) -> str | None:
    if role == RESPONSE and cues.is_narration(sentence):
        return None
    if cues.is_recall(sentence):
        return None  # said before, and learned then: recalling it is not learning it again
    if cues.is_decision(sentence, opening=opening):
        # A question only when it directs a choice ("can we please use X?"): the cue
        # tells that from one that asks ("should we use X?").
        return "decision"
    if cues.is_question(sentence):
        return None
    if cues.is_lesson(sentence):
        return "lesson"
    if _PRICE.search(sentence) and not _CALCULATION.search(sentence):
        return "data"
    if role == RESPONSE and _FINDING.search(sentence):
        return "finding"
    return None


def _context_facts(turns: _Turns, step: Step, kind: str) -> list[str]:
    """What the statement was about: the task it was made in, the files that task changed."""
    facts = []
    task = turns.task(step)
    if task is not None and task is not step and kind != "data" and _asks_for_work(task):
        facts.append(f"task: {clip(cues.sentences(lead(task.text))[0], VALUE_LIMIT)}")
    changed = turns.files(step)
    if changed:
        facts.append(f"files: {', '.join(changed[:5])}")
    return facts


def _asks_for_work(task: Step) -> bool:
    """A prompt that is a task to record: not a question that only asks what is known
    ("What did we decide…?"), though a request worded as one ("…, can you fix it?") is."""
    said = cues.sentences(task.text)
    return not cues.is_question(said[0]) or any(cues.is_request(s) for s in said)


def _is_task(step: Step) -> bool:
    return step.role == PROMPT and cues.is_task(step.text) and bool(cues.sentences(step.text))


class _Turns:
    """A session's turns (each from a task prompt to the next, in the order things
    happened), found once: the task a step was made in, and the files its turn changed,
    read once a turn. Those are what its tools recorded; in a session that recorded no edit
    at all, not even one that failed (a history exported without its edits), what the
    turn's replies report (``reported.reported_changes``). A live session's turn that
    changed nothing changed nothing, whatever its replies offer."""

    def __init__(self, session: list[Step]) -> None:
        self.session = session
        self.at = {s.seq: i for i, s in enumerate(session)}
        self.starts = [i for i, s in enumerate(session) if _is_task(s)]  # a turn's first step
        self.recorded = records_changes(session)
        self.changed: dict[int, list[str]] = {}

    def _turn(self, step: Step) -> int:
        """Which turn ``step`` is in: an index into ``starts``, -1 before the first task."""
        return bisect_right(self.starts, self.at[step.seq]) - 1

    def task(self, step: Step) -> Step | None:
        turn = self._turn(step)
        return self.session[self.starts[turn]] if turn >= 0 else None

    def files(self, step: Step) -> list[str]:
        turn = self._turn(step)
        if turn not in self.changed:
            begin = self.starts[turn] if turn >= 0 else 0
            end = self.starts[turn + 1] if turn + 1 < len(self.starts) else None
            steps = self.session[begin:end]
            changed = list(dict.fromkeys(f for s in steps if s.changes_files for f in s.files))
            if not changed and not self.recorded:
                replies = (s.text for s in steps if s.role == RESPONSE)
                changed = reported_changes(replies, (f for s in steps for f in s.files))
            self.changed[turn] = changed
        return self.changed[turn]


def _fixed_failures(session: list[Step], chinese: bool) -> list[_Candidate]:
    """A command that failed, then passed after a change: what failed and what fixed it."""
    found = []
    handled: set[int] = set()
    for index, failure in enumerate(session):
        if failure.role != FAILURE or not failure.command or failure.rejected:
            continue
        if failure.seq in handled:
            continue
        key = command_key(failure.command)
        later = session[index + 1 :]
        success = next((s for s in later if s.role == TOOL and _runs(s, key)), None)
        if success is None:
            continue
        between = [s for s in later if s.seq < success.seq]
        handled |= {s.seq for s in between if s.role == FAILURE and _runs(s, key)}
        candidate = _lesson(failure, success, between, chinese)
        if candidate is not None:
            found.append(candidate)
    return found[:MAX_PER_KIND]


def _runs(step: Step, key: str) -> bool:
    return bool(step.command) and command_key(step.command) == key


def _lesson(failure: Step, success: Step, between: list[Step], chinese: bool) -> _Candidate | None:
    changed = [f for s in between if s.changes_files for f in s.files]
    key = command_key(failure.command)
    ran = [s for s in between if s.role == TOOL and s.command and command_key(s.command) != key]
    causes = [
        sentence
        for s in between
        if s.role == RESPONSE
        for sentence in cues.sentences(s.text)
        if cues.is_conclusion(sentence) and not cues.is_narration(sentence)
    ]
    if not (changed or ran):
        return None  # a retry that happened to pass teaches nothing
    error = _first_line(failure.text)
    if changed:
        fix = ("修改 " if chinese else "edited ") + ", ".join(dict.fromkeys(changed))
    else:
        fix = ("运行 " if chinese else "ran ") + ", ".join(f"`{s.command}`" for s in ran[:3])
    command = clip(failure.command, 80)
    if chinese:
        summary = f"`{command}` 失败（{clip(error, 80)}），{fix} 后通过。"
    else:
        summary = f"`{command}` failed ({clip(error, 80)}); fixed: {fix}"
    facts = [f"failed: `{command}`", f"error: {clip(error, VALUE_LIMIT)}"]
    if causes:
        facts.append(f"cause: {clip(causes[0], VALUE_LIMIT)}")
    facts += [f"fix: {clip(fix, VALUE_LIMIT)}", f"verified: `{command}` passed after the fix"]
    evidence = [failure, *(s for s in between if s.changes_files or s in ran), success]
    # The subject a person looks for: the command and what it failed with.
    title = f"{command} {'失败' if chinese else 'fails with'} {error}"
    return _Candidate("pitfall", summary, evidence, facts=facts, title=title)


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else "error"


_IMPORTANCE = {"decision": 0.7, "pitfall": 0.7, "lesson": 0.6, "finding": 0.6, "data": 0.6}
_TAGS = {
    "decision": ["decision"],
    "pitfall": ["pitfall", "lesson"],
    "lesson": ["lesson"],
    "finding": ["finding"],
    "data": ["data"],
}


def _draft(candidate: _Candidate, project: str) -> Draft:
    first = candidate.steps[0]
    confirmed = candidate.from_user or len({s.role for s in candidate.steps}) > 1
    summary = clip(
        close(_plain(candidate.statement), cues.is_cjk(candidate.statement)), SUMMARY_LIMIT
    )
    return Draft(
        project=project,
        summary=summary,
        facts=[clip(_plain(fact), VALUE_LIMIT + 40) for fact in candidate.facts],
        importance=round(_IMPORTANCE[candidate.kind] + (0.1 if candidate.from_user else 0), 2),
        confidence=CONFIRMED if confirmed else DECLARED if candidate.declared else UNCONFIRMED,
        source=f"session {first.session_id}",
        tags=list(_TAGS[candidate.kind]),
        date=first.occurred_at[:10],
        description=describe(_plain(candidate.statement), title=candidate.title) or None,
        properties={"events": list(dict.fromkeys(s.event_id for s in candidate.steps))},
    )


def _plain(text: str) -> str:
    return _WIKILINK.sub(r"\1", text)
