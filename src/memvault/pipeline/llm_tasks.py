"""What the pipeline asks an LLM: a session summary, the fragments worth keeping, and better
observations for tool outcomes.

Each task sends a compact transcript (steps tagged ``[e<n>]`` so answers can cite them) and
asks for one JSON object. The answer is checked field by field; an answer that cannot be
read raises `UnusableAnswer`, an `LLMError`, so the caller treats it like any other failed
call (retry, then fall back to the offline pipeline). What the model cannot know better
than the log (the files touched, the commands run, counts) is taken from the offline
result, never from the answer.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from memvault.derive import cues
from memvault.derive.activity import FAILURE, PROMPT, RESPONSE, TOOL, Step
from memvault.derive.describe import describe
from memvault.derive.summarize import ITEM_LIMIT, LIMITS, TOPIC_LIMIT, Summary
from memvault.derive.synthetic import NARRATIVE_LIMIT, TITLE_LIMIT
from memvault.derive.text import clip, close
from memvault.domain import Event, Observation, ObservationDraft
from memvault.llm import LLM, LLMError
from memvault.llm.budget import estimate_tokens
from memvault.vault.remember import Draft

SYNTHETIC = "synthetic"
STEP_LIMIT = 600  # characters of one step in a transcript
TOOL_INPUT_LIMIT = 800
TOOL_OUTPUT_LIMIT = 1200
MAX_FRAGMENTS = 5
FACT_LIMIT = 240
KEYWORD_LIMIT = 8
CONTEXT_LIMIT = 400
FRAGMENT_KINDS = {
    "decision": (0.7, ["decision"]),
    "pitfall": (0.7, ["pitfall", "lesson"]),
    "lesson": (0.6, ["lesson"]),
    "finding": (0.6, ["finding"]),
    "data": (0.6, ["data"]),
}
_ROLES = {PROMPT: "user", RESPONSE: "assistant", TOOL: "tool", FAILURE: "tool failed"}
_WIKILINK = re.compile(r"\[\[(?:[^\]|\n]*\|)?([^\]\n]*)\]\]")
_HEADING = re.compile(r"^\s*#+\s+")


class UnusableAnswer(LLMError):
    """The model answered, but not with what was asked for."""


def derived_by(llm: LLM) -> str:
    """``llm:<provider>:<model>``: what wrote a summary, fragment or observation."""
    return "llm:" + llm.name.split("@", 1)[0]


# -- transcripts ----------------------------------------------------------------------------


def transcript(session: Sequence[Step], observations: Sequence[Observation] = ()) -> str:
    """One line per step, ``[e<seq>] <role>: <text>``, each clipped. A tool step whose
    observation an LLM upgraded is told by that observation, not by its raw output."""
    upgraded = {o.event_seq: o for o in observations if o.derived_by != SYNTHETIC}
    lines = []
    for step in session:
        role = _ROLES.get(step.role, step.type)
        what = step.command or step.target or ", ".join(step.files)
        head = f"[e{step.seq}] {role}" + (f" ({step.type}: {clip(what, 160)})" if what else "")
        better = upgraded.get(step.seq) if step.role in (TOOL, FAILURE) else None
        said = f"{better.title}. {better.narrative}" if better is not None else step.text
        text = clip(said, STEP_LIMIT)
        lines.append(f"{head}: {text}" if text else head)
    return "\n".join(lines)


_KANA = re.compile(r"[\u3040-\u30ff]")


def step_costs(session: Sequence[Step], observations: Sequence[Observation] = ()) -> dict[int, int]:
    """Estimated tokens of each step's transcript line, by event sequence."""
    lines = transcript(session, observations).split("\n")
    return {step.seq: estimate_tokens(line) + 1 for step, line in zip(session, lines, strict=True)}


def _language(session: Sequence[Step], earlier: str = "") -> str:
    """The language to answer in: the user's, from their prompts, else from what was
    written before (a run of tool steps has no prompt of its own)."""
    said = " ".join(s.text for s in session if s.role == PROMPT) or earlier
    if _KANA.search(said):
        return "Japanese"
    if cues.is_cjk(said):
        return "Chinese"
    return "the user's language"


# -- summaries --------------------------------------------------------------------------------

SUMMARY_SYSTEM = """\
You keep the running summary of one coding-agent session for the developer's notes.
Answer with one JSON object and nothing else:
{"topic": "...", "current_context": "...", "decisions": ["..."],
 "open_questions": ["..."], "next_actions": ["..."], "keywords": ["..."]}
- topic: what the session is about, at most 8 words, no full stop.
- current_context: one or two sentences: the task, and where it got to (result or progress).
- decisions: choices made and why ("use X instead of Y: reason"); not actions taken.
- open_questions: what is still unanswered; next_actions: what is left to do.
- keywords: up to 8 short terms (libraries, components, errors).
Write every value in {language}. Short lines, concrete names, no filler. When a previous
summary is given, return it updated with the new steps: keep what still holds, drop what
was resolved or superseded."""


def llm_summary(
    llm: LLM,
    session: Sequence[Step],
    previous: Summary | None,
    offline: Summary,
    observations: Sequence[Observation] = (),
) -> Summary:
    """The summary the model writes from ``previous`` and the new steps, with the offline
    summary's facts (files, commands, counts)."""
    parts = []
    if previous is not None:
        shown = {
            k: getattr(previous, k)
            for k in (
                "topic",
                "current_context",
                "decisions",
                "open_questions",
                "next_actions",
                "keywords",
            )
        }
        parts.append("Previous summary:\n" + json.dumps(shown, ensure_ascii=False, indent=1))
    if offline.files:
        parts.append("Files touched: " + ", ".join(offline.files[: LIMITS["files"]]))
    parts.append("New steps:\n" + transcript(session, observations))
    earlier = previous.current_context if previous is not None else ""
    system = SUMMARY_SYSTEM.replace("{language}", _language(session, earlier))
    answer = parse_object(
        llm.complete(system, "\n\n".join(parts), max_tokens=800), "current_context"
    )
    context = _text(answer, "current_context", CONTEXT_LIMIT)
    if not context:
        raise UnusableAnswer(f"LLM {llm.name} gave a summary without a current_context")
    return replace(
        offline,
        topic=_text(answer, "topic", TOPIC_LIMIT).rstrip("。.") or offline.topic,
        current_context=context,
        decisions=_texts(answer, "decisions", LIMITS["decisions"]),
        open_questions=_texts(answer, "open_questions", LIMITS["questions"]),
        next_actions=_texts(answer, "next_actions", LIMITS["next"]),
        keywords=_texts(answer, "keywords", KEYWORD_LIMIT, limit=40) or offline.keywords,
        derived_by=derived_by(llm),
    )


# -- fragments --------------------------------------------------------------------------------

FRAGMENT_SYSTEM = """\
You pick out what a coding session learned that is worth remembering for months:
decisions and their reasons, conclusions and root causes, pitfalls and how they were fixed,
measured data and prices, research findings. Never: reads, greetings, narration, plans that
were not carried out, temporary calculations, anything obvious from the code itself.
Most sessions have zero to three such things; return fewer rather than noise.
Answer with one JSON object and nothing else:
{"fragments": [{"kind": "decision|pitfall|lesson|finding|data",
  "title": "what it is about, at most 8 words",
  "summary": "one sentence that stands alone",
  "facts": ["key: value", "cause ∵ ...", "X → Y"],
  "importance": 0.0-1.0, "events": ["e12", "e15"]}]}
- facts: 1 to 6 short lines in compressed form (key: value, explicit relations with → ⇒ ∵ ∴);
  no paragraphs, no headings, no [[links]].
- events: the [e<n>] steps each fragment comes from.
Write in {language}."""


def llm_fragments(
    llm: LLM,
    session: Sequence[Step],
    observations: Sequence[Observation] = (),
    *,
    project: str,
) -> list[Draft]:
    """Drafts of what the model found worth keeping in the steps, cited to their events."""
    if not session:
        return []
    system = FRAGMENT_SYSTEM.replace("{language}", _language(session))
    answer = parse_object(
        llm.complete(system, transcript(session, observations), max_tokens=1200), "fragments"
    )
    listed = answer.get("fragments")
    if not isinstance(listed, list):
        raise UnusableAnswer(f"LLM {llm.name} gave no `fragments` list")
    by_seq = {step.seq: step for step in session}
    chinese = cues.is_cjk(" ".join(s.text for s in session if s.role == PROMPT))
    drafts = []
    for item in listed[:MAX_FRAGMENTS]:
        draft = _fragment(item, by_seq, project, chinese, derived_by(llm))
        if draft is not None:
            drafts.append(draft)
    return drafts


def _fragment(
    item: Any, by_seq: dict[int, Step], project: str, chinese: bool, author: str
) -> Draft | None:
    if not isinstance(item, dict):
        return None
    kind = str(item.get("kind") or "").strip().lower()
    summary = _plain(_text(item, "summary", 200))
    facts = [_plain(f) for f in _texts(item, "facts", 6, limit=FACT_LIMIT)]
    facts = [f for f in facts if f]
    if kind not in FRAGMENT_KINDS or not summary or not facts:
        return None  # an item without its kind, sentence and facts is not a fragment
    cited = [by_seq[seq] for seq in _cited(item.get("events"), by_seq)]
    if not cited:
        cited = [next(iter(by_seq.values()))]
    base, tags = FRAGMENT_KINDS[kind]
    importance = item.get("importance")
    if not _number(importance) or not 0 <= importance <= 1:
        importance = base
    return Draft(
        project=project,
        summary=close(summary, chinese),
        facts=facts,
        importance=round(float(importance), 2),
        confidence=0.8,
        source=f"session {cited[0].session_id}",
        tags=list(tags),
        date=cited[0].occurred_at[:10],
        # The model's title names the file when it gave one; else the summary's gist.
        description=describe(summary, title=_plain(_text(item, "title", 200))) or None,
        properties={"events": list(dict.fromkeys(s.event_id for s in cited))},
    )


def _cited(value: Any, by_seq: dict[int, Step]) -> list[int]:
    refs = value if isinstance(value, list) else [value]
    found = []
    for ref in refs:
        match = re.fullmatch(r"\[?e?(\d+)\]?", str(ref).strip())
        if match and int(match[1]) in by_seq:
            found.append(int(match[1]))
    return sorted(set(found))


def _plain(text: str) -> str:
    """Fragment text without links or heading marks (fragments spec, items 3 and 4);
    nested brackets are unwrapped until none is left."""
    while (unlinked := _WIKILINK.sub(r"\1", text)) != text:
        text = unlinked
    return _HEADING.sub("", text.replace("[[", "").replace("]]", "")).strip()


# -- observations -------------------------------------------------------------------------------

COMPRESS_SYSTEM = """\
You rewrite raw tool calls of a coding agent as short observations for its memory.
For each [o<n>] item, answer with what it did and what came of it:
{"observations": [{"ref": "o1", "title": "...", "narrative": "...",
  "facts": ["..."], "concepts": ["..."], "importance": 1-10}]}
- title: at most 10 words, names the file, command or query and the outcome.
- narrative: one or two sentences; facts: up to 5 short concrete lines (values, errors,
  names); concepts: up to 5 terms (libraries, components, techniques).
- importance: 1 for a routine read, 5 for a normal change, 8-10 for a failure, a fix or a
  decision.
Answer with one JSON object and nothing else; skip nothing."""


def llm_observations(
    llm: LLM, items: Sequence[tuple[Event, Observation]]
) -> dict[int, ObservationDraft]:
    """Better observations for tool outcomes, keyed by event sequence. Type and files stay
    the synthetic ones (the host said which tool ran on which file)."""
    if not items:
        return {}
    blocks = [compress_block(n, event, obs) for n, (event, obs) in enumerate(items, 1)]
    answer = parse_object(
        llm.complete(COMPRESS_SYSTEM, "\n\n".join(blocks), max_tokens=200 * len(items) + 200),
        "observations",
    )
    listed = answer.get("observations")
    if not isinstance(listed, list):
        raise UnusableAnswer(f"LLM {llm.name} gave no `observations` list")
    by_ref: dict[int, dict] = {}
    for item in listed:
        match = re.fullmatch(r"\[?o?(\d+)\]?", str(_get(item, "ref")).strip())
        number = int(match[1]) if match else None
        if number is None or not 1 <= number <= len(items) or number in by_ref:
            raise UnusableAnswer(f"LLM {llm.name} answered for an item it was not given")
        if not _text(item, "title", TITLE_LIMIT) or not _text(item, "narrative", NARRATIVE_LIMIT):
            raise UnusableAnswer(f"LLM {llm.name} left out a title or narrative (o{number})")
        by_ref[number] = item
    if len(by_ref) != len(items):
        # A partial answer cannot be told from a misnumbered one: all or nothing.
        raise UnusableAnswer(f"LLM {llm.name} answered {len(by_ref)} of {len(items)} items")
    upgraded: dict[int, ObservationDraft] = {}
    for number, item in by_ref.items():
        _, observation = items[number - 1]
        title = _text(item, "title", TITLE_LIMIT)
        narrative = _text(item, "narrative", NARRATIVE_LIMIT)
        importance = item.get("importance")
        upgraded[observation.event_seq] = ObservationDraft(
            type=observation.type,
            title=title,
            narrative=narrative,
            facts=_texts(item, "facts", 5, limit=ITEM_LIMIT),
            files=list(observation.files),
            concepts=_texts(item, "concepts", 5, limit=40),
            importance=(
                min(max(int(importance), 1), 10) if _number(importance) else observation.importance
            ),
        )
    return upgraded


def compress_block(n: int, event: Event, observation: Observation) -> str:
    """One tool call as the compressor is shown it, numbered ``[o<n>]``."""
    data = event.payload if isinstance(event.payload, dict) else {"value": event.payload}
    tool = data.get("tool_name") or data.get("toolName") or observation.type
    given = data.get("tool_input", data.get("toolInput"))
    result = data.get(
        "tool_output",
        data.get("tool_response", data.get("error", data.get("error_message"))),
    )
    return (
        f"[o{n}] {event.hook_type} {tool}\n"
        f"input: {clip(_dump(given), TOOL_INPUT_LIMIT)}\n"
        f"result: {clip(_dump(result), TOOL_OUTPUT_LIMIT)}"
    )


def _get(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, dict) else None


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _dump(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


# -- answers --------------------------------------------------------------------------------------


def parse_object(text: str, key: str) -> dict:
    """The JSON object in an answer that holds ``key``, allowing for a code fence, a
    reasoning block or words around it (which may hold braces of their own)."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    seen_json = False
    while start >= 0:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            value = None
        if isinstance(value, dict):
            seen_json = True
            if key in value:
                return value
        start = text.find("{", start + 1)
    if seen_json:
        raise UnusableAnswer(f"the LLM's answer has no JSON object with `{key}`")
    raise UnusableAnswer(f"the LLM's answer holds no JSON object: {clip(text, 120)!r}")


def _text(item: dict, key: str, limit: int) -> str:
    value = item.get(key)
    return clip(value, limit) if isinstance(value, str) else ""


def _texts(item: dict, key: str, most: int, *, limit: int = ITEM_LIMIT) -> list[str]:
    value = item.get(key)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return []
    found = []
    for entry in value:
        text = clip(str(entry), limit) if isinstance(entry, str | int | float) else ""
        if text and text not in found:
            found.append(text)
    return found[:most]


__all__ = [
    "UnusableAnswer",
    "compress_block",
    "derived_by",
    "llm_fragments",
    "llm_observations",
    "llm_summary",
    "parse_object",
    "step_costs",
    "transcript",
]
