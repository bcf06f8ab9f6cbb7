"""A session as one retrieval unit: what it asked, decided, touched and ran.

Coding work is asked about by session ("the session where we moved the parser to
``BlockMerger.cs``"), and a request's words are spread over a whole session: the request
names the goal, a reply the decision, a tool call the file. One document per session holds
them together, so a later request that shares a few of them finds the session even when
no single event holds them all.

Requests and replies are read from the raw events (whole, as the hook sent them, not the
observation's clipped narrative); tool calls from their observations (files, command or
target), whose raw output a session's summary has no use for.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from memvault.derive.activity import PROMPT, RESPONSE, steps
from memvault.derive.cues import clean, is_decision, is_task, openers, sentences
from memvault.domain import Event, Observation

# The hooks whose raw text a digest reads; every other event is read from its observation.
TEXT_HOOKS = ("prompt_submit", "assistant_response", "stop", "subagent_stop", "task_completed")
TOOL_HOOKS = frozenset({"post_tool_use", "post_tool_failure"})
# Of all requests together, and of all replies: what a session's document reads of them.
# A long session's are read whole (the real sessions' longest hold 90,000 characters of
# replies); a pasted megabyte is not.
REQUEST_CHARS = 200_000
REPLY_CHARS = 200_000
FILES = 60
COMMANDS = 40
TARGETS = 40
DECISIONS = 12
EVENT_IDS = 5


@dataclass(frozen=True, slots=True)
class Digest:
    requests: list[str]  # the user's requests, in order
    decisions: list[str]  # sentences of requests and replies that state a decision
    files: list[str]  # files the session's tools named, most often first
    commands: list[str]  # commands it ran, in order, once each
    targets: list[str]  # what its searches and fetches looked for
    replies: list[str]  # the agent's replies, in order
    event_ids: list[str]  # the first events' ids: where the session is found
    first_at: str
    last_at: str

    @property
    def empty(self) -> bool:
        """A session with no request and no tool call did no work worth finding."""
        return not (self.requests or self.files or self.commands or self.targets)


def digest(events: Sequence[Event], observations: Sequence[Observation]) -> Digest:
    """The digest of a session from its text events (``TEXT_HOOKS``, raw) and its
    observations (all of them; those of text events are read from the events instead)."""
    texts = steps(events, [])
    asked = [s.text for s in texts if s.role == PROMPT and is_task(s.text)]
    requests = _within(asked, REQUEST_CHARS)
    # A turn's end may repeat its last reply: each reply once.
    said = dict.fromkeys(s.text for s in texts if s.role == RESPONSE)
    replies = _within(list(said), REPLY_CHARS)
    decisions: list[str] = []
    spoken = [(text, openers(text)) for text in requests]
    spoken += [(text, frozenset()) for text in replies]
    for text, opening in spoken:
        for sentence in sentences(clean(text)):
            decides = is_decision(sentence, opening=sentence in opening)
            if len(decisions) < DECISIONS and decides and sentence not in decisions:
                decisions.append(sentence)
    files: Counter[str] = Counter()
    commands: list[str] = []
    targets: list[str] = []
    for observation in observations:
        if observation.hook_type not in TOOL_HOOKS or observation.type == "host_internal":
            continue
        files.update(dict.fromkeys(observation.files, 1))
        for fact in observation.facts:
            label, _, value = fact.partition(": ")
            value = " ".join(value.split())
            if label == "command" and value and value not in commands:
                commands.append(value)
            elif label == "target" and value and value not in (*observation.files, *targets):
                targets.append(value)
    times = [o.occurred_at for o in observations] + [e.occurred_at for e in events]
    ordered = sorted([*observations, *events], key=lambda item: _seq(item))
    ids = []
    for item in ordered:
        ident = item.client_event_id or f"evt_{_seq(item)}"
        if ident not in ids:
            ids.append(ident)
        if len(ids) == EVENT_IDS:
            break
    return Digest(
        requests=requests,
        decisions=decisions,
        files=[path for path, _ in files.most_common(FILES)],
        commands=commands[:COMMANDS],
        targets=targets[:TARGETS],
        replies=replies,
        event_ids=ids,
        first_at=min(times, default=""),
        last_at=max(times, default=""),
    )


def _seq(item: Event | Observation) -> int:
    return item.seq if isinstance(item, Event) else item.event_seq


def _within(texts: list[str], limit: int) -> list[str]:
    """As many whole texts as fit in ``limit`` characters, the last one cut to fit."""
    kept, left = [], limit
    for text in texts:
        text = text.strip()
        if not text:
            continue
        if left <= 0:
            break
        kept.append(text[:left])
        left -= len(text)
    return kept
