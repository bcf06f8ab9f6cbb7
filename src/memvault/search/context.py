"""Context packing: the most useful memory for a task, within a token budget.

The block opens with the report line agents show their user
(``📖 agent memory：读取 N 个碎片 → …``), then fragments (summary and facts), session
summaries and observations, best first, each section only as long as the budget allows.
Tokens are estimated, not counted with a model's tokenizer: about four characters per
token for alphabetic text and one per CJK character, which errs on the generous side.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memvault.search.analyzer import estimate_tokens
from memvault.search.engine import Hit
from memvault.vault.remember import facts_from

FACTS_PER_FRAGMENT = 8
# Where to look when agent memory is not enough, in order; memvault owns only the first.
SOURCES_HINT = "(not enough? next: the knowledge base, then concepts, then the web)"
_NAME_PREFIX = re.compile(r"^.+? - \d{4}-\d{2}-\d{2} - ")


@dataclass(slots=True)
class Packed:
    text: str
    tokens: int
    budget: int
    blocks: list[dict[str, str]] = field(default_factory=list)
    truncated: bool = False


def report_line(fragments: list[Hit]) -> str:
    if not fragments:
        return "📖 agent memory：读取 0 个碎片 → nothing relevant yet"
    listed = "; ".join(
        f"{_short_title(hit.document.title)}: {_clip(hit.document.summary, 60)} → relevant"
        for hit in fragments
    )
    return f"📖 agent memory：读取 {len(fragments)} 个碎片 → {listed}"


def pack(
    *,
    fragments: list[Hit],
    summaries: list[Hit],
    observations: list[Hit],
    budget: int,
    project_summary: str | None = None,
) -> Packed:
    """Fill ``budget`` tokens: the report line, then fragments, the project's L2 summary,
    session summaries and observations, in that order, each item whole or not at all."""
    out = Packed(text="", tokens=0, budget=budget)
    lines: list[str] = []

    def add(block: str, kind: str, item_id: str) -> bool:
        cost = estimate_tokens(block) + 1
        if out.tokens + cost > budget:
            out.truncated = True
            return False
        lines.append(block)
        out.tokens += cost
        out.blocks.append({"kind": kind, "id": item_id, "text": block})
        return True

    # As many fragments as fit together with the report line that lists them.
    kept: list[Hit] = []
    spent = 0
    for hit in fragments:
        spent += estimate_tokens(_fragment_block(hit)) + 1
        heading = estimate_tokens("## Agent memory") + 1
        line = estimate_tokens(report_line([*kept, hit])) + 1
        if spent + heading + line > budget:
            out.truncated = True
            break
        kept.append(hit)
    add(report_line(kept), "report", "report")
    if kept:
        add("## Agent memory", "heading", "fragments")
        for hit in kept:
            add(_fragment_block(hit), "fragment", hit.document.key)
    if project_summary:
        add(f"## Project memory\n{project_summary.strip()}", "project", "project")
    _section(
        add,
        "## Recent sessions",
        "summaries",
        [
            (f"- {h.document.title}: {h.document.summary}".rstrip(": "), "summary", h.document.key)
            for h in summaries
        ],
    )
    _section(
        add,
        "## Related activity",
        "observations",
        [
            (
                f"- [{h.document.updated_at[:10]}] {h.document.summary or h.document.title}",
                "observation",
                h.document.key,
            )
            for h in observations
        ],
    )
    if kept or project_summary:
        add(SOURCES_HINT, "hint", "sources")
    out.text = "\n".join(lines)
    return out


def _section(add, heading: str, name: str, items: list[tuple[str, str, str]]) -> None:
    """A heading and as many items as fit; no heading when not even the first one does."""
    if not items:
        return
    first = items[0][0]
    if not add(f"{heading}\n{first}", items[0][1], items[0][2]):
        return
    for text, kind, key in items[1:]:
        if not add(text, kind, key):
            return


def _short_title(title: str) -> str:
    """A fragment's description: its file name without the project and date."""
    return _NAME_PREFIX.sub("", title)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _fragment_block(hit: Hit) -> str:
    document = hit.document
    facts = facts_from(document.body)[:FACTS_PER_FRAGMENT]
    head = f"- **{document.title}** (importance {document.importance:g}): {document.summary}"
    return "\n".join([head, *(f"  - {fact}" for fact in facts)])
