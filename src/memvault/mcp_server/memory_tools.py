"""The memory tools: read in layers (search → get → project), recall the block for a task,
and save, edit and delete a fragment.

Each is a plain function over ``Memory``: the first parameter is the memory, the others are
the tool's arguments, with the bounds and descriptions its input schema publishes. The
docstring is the description the model reads.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import Field

from memvault import present
from memvault.errors import InvalidInput
from memvault.mcp_server.answers import NotFound, answer
from memvault.memory import Memory
from memvault.vault.board import SESSION_ID
from memvault.vault.board_files import BoardError
from memvault.vault.edit import Edit
from memvault.vault.remember import Draft, facts_from

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")

Kind = Literal["fragment", "summary", "observation"]
ProjectFilter = Annotated[
    str | None, Field(min_length=1, max_length=200, description="Only this project's memory")
]


def memory_search(
    memory: Memory,
    query: Annotated[
        str,
        Field(
            min_length=1,
            max_length=4000,
            description='Words, a "quoted phrase" or a prefix*, in any language',
        ),
    ],
    limit: Annotated[int, Field(ge=1, le=100, description="How many results")] = 10,
    project: ProjectFilter = None,
    kinds: Annotated[
        list[Kind] | None,
        Field(
            min_length=1,
            description="fragment (long-term memory), summary (a board session) or "
            "observation (one captured event); all when omitted",
        ),
    ] = None,
    include_archived: Annotated[
        bool, Field(description="Also search fragments moved to _archive/")
    ] = False,
) -> CallToolResult:
    """Search agent memory (L0): fragments, session summaries and captured observations,
    best first by relevance, importance and recency. Each result is a title and a one-line
    summary with its id; read a relevant one whole with memory_get (L1), and a project's
    other fragments with memory_project (L2). Agent memory comes first; when it is not
    enough, look next in the knowledge base, then concepts, then the web."""
    hits = memory.recall.search(
        query, limit=limit, project=project, kinds=kinds, include_archived=include_archived
    )
    results = [present.hit_view(memory, hit) for hit in hits]
    where = f" in project {project}" if project else ""
    lines = [f"{len(results)} result(s) for {query!r}{where}"]
    for n, view in enumerate(results, 1):
        about = view["summary"] or view["title"]
        scope = f", {view['project']}" if view["project"] else ""
        lines.append(f"{n}. [{view['kind']}] {view['id']}{scope} (score {view['score']:.3f})")
        lines.append(f"   {about}")
    if results:
        lines.append("Read one whole with memory_get(id).")
    return answer({"query": query, "results": results}, "\n".join(lines))


def memory_get(
    memory: Memory,
    id: Annotated[
        str,
        Field(
            min_length=1,
            max_length=500,
            description="An id from memory_search, memory_project, memory_sessions or "
            "memory_timeline: a fragment id, a Memory Session ID, or obs_<n>",
        ),
    ],
) -> CallToolResult:
    """Read one memory whole (L1): a fragment's facts and frontmatter, a session's board row
    with its snapshot, or one observation. Use it when a search result looks relevant; a
    fragment read this way counts as used, which keeps it from being archived."""
    # Only a whole Session ID names a board row and its snapshot: a row whose id merely
    # starts like one (a hand edit, an import) must not lead the read out of sessions/.
    row = memory.board.row_in_file(id) if SESSION_ID.fullmatch(id) else None
    if row is not None:
        try:
            snapshot = memory.board.snapshot_text(id)
        except BoardError as exc:  # its snapshot would be read from outside the vault
            raise ToolError(f"session {id}: {exc}") from None
        data = {
            "kind": "session",
            "id": id,
            "session": present.board_row(row),
            "snapshot": snapshot,
        }
        heading = f"[session] {id} · {row.status} · {row.topic}\n{row.summary}"
        return answer(data, f"{heading}\n\n{snapshot or '(no snapshot yet)'}")
    entry = memory.recall.get(id)
    if entry is None:
        raise NotFound(
            f"no memory {id!r}; ids come from memory_search, memory_project, memory_sessions "
            "or memory_timeline"
        )
    view = present.entry_view(memory, entry)
    scope = f" · {view['project']}" if view["project"] else ""
    heading = f"[{view['kind']}] {view['id']}{scope}\n{view['summary'] or view['title']}"
    return answer(view, f"{heading}\n\n{entry.body}")


def memory_project(
    memory: Memory,
    project: Annotated[
        str, Field(min_length=1, max_length=200, description="The project, as fragments name it")
    ],
    limit: Annotated[int, Field(ge=1, le=200, description="How many fragments to list")] = 30,
) -> CallToolResult:
    """A project's memory (L2): its maintained summary when it has one, and its fragments,
    newest first. Use it when one fragment (L1) is not enough to act on."""
    found = memory.recall.project_memory(project, limit=limit)
    fragments = [present.document_view(memory, document) for document in found.fragments]
    data = {
        "project": found.project,
        "summary": found.summary,
        "total": found.total,
        "fragments": fragments,
    }
    lines = [f"{project}: {found.total} fragment(s), {len(fragments)} listed"]
    if found.summary:
        lines += ["", found.summary.strip(), ""]
    lines += [f"- {view['id']}: {view['summary']}" for view in fragments]
    return answer(data, "\n".join(lines))


def memory_save(
    memory: Memory,
    project: Annotated[
        str,
        Field(
            min_length=1,
            max_length=200,
            description="The project it belongs to; fragments are grouped by project",
        ),
    ],
    summary: Annotated[
        str | None,
        Field(
            max_length=1000,
            description="One sentence, what a search shows first; when omitted, the first "
            "sentence of content, or else of the first fact",
        ),
    ] = None,
    facts: Annotated[
        list[Annotated[str, Field(max_length=2000)]] | None,
        Field(
            max_length=200,
            description="One line each, compressed: `key: value`, key data, relations with "
            "→ ⇒ ∵ ∴; no narrative paragraphs",
        ),
    ] = None,
    content: Annotated[
        str | None,
        Field(max_length=20_000, description="The facts as markdown lines, instead of a list"),
    ] = None,
    importance: Annotated[float, Field(ge=0, le=1, description="0 to 1")] = 0.5,
    confidence: Annotated[float | None, Field(ge=0, le=1, description="0 to 1")] = None,
    source: Annotated[
        str | None, Field(max_length=200, description="Where it comes from, e.g. conversation")
    ] = None,
    tags: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=100)]] | None,
        Field(max_length=50, description="Tags to add; agent-memory is always one"),
    ] = None,
    properties: Annotated[
        dict[str, Any] | None,
        Field(description="Other frontmatter fields to keep with the fragment"),
    ] = None,
    supersedes: Supersedes = None,
) -> CallToolResult:
    """Save a memory fragment: a decision, conclusion, price or data point, pitfall or
    lesson, or research finding, not a temporary calculation or one-off detail. Write at the
    end of every task: ask (1) was there a decision, conclusion or finding? (2) a pitfall or
    lesson? (3) will it be needed next time? Any yes: save it in the same turn, then end the
    reply with `{write_report}`. A fragment more than 0.8
    similar to one of the same project is merged into it instead of copied. Fragments are
    plain text grouped by project: a `type` or `related_fragments` field and [[wikilinks]]
    are refused. When it replaces an older fragment (a decision changed), name that one in
    `supersedes`: it is marked [superseded] and no longer given as current."""
    written = facts_from(content) if content else []
    lines = list(facts or []) + written
    draft = Draft(
        project=project.strip(),
        summary=(summary or "").strip() or _first_sentence(written or lines),
        facts=lines,
        importance=importance,
        confidence=confidence,
        source=source,
        tags=list(dict.fromkeys(tags or [])),
        properties=dict(properties or {}),
    )
    try:
        saved = memory.fragments.remember(draft, supersedes=supersedes)
    except InvalidInput as exc:
        raise ToolError(f"not saved: {exc.message}") from None
    except OSError as exc:
        raise ToolError(f"not saved: {exc}") from None
    vault = memory.settings.vault_path
    data = saved.to_dict(vault)
    document = memory.recall.fragment_document(saved.path)
    if document is not None:
        data["id"] = memory.recall.public_id(document)
        data["memory"] = present.document_view(memory, document)
    if saved.action == "merged":
        text = f"merged into {data['path']} (similarity {data['similarity']})"
    else:
        text = f"created {data['path']}"
    if "id" in data:
        text += f"\nid: {data['id']}"
    if supersedes is not None and data.get("id") != supersedes:
        data["supersedes"] = supersedes
        text += f"\nsupersedes: {supersedes} (marked [superseded])"
    return answer(data, text)


Supersedes = Annotated[
    str | None,
    Field(
        min_length=1,
        max_length=500,
        description="The id of an older fragment this one replaces: it is marked "
        "[superseded] and no longer injected as current",
    ),
]
FragmentId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=500,
        description="A fragment id, as memory_search, memory_project and memory_save give it",
    ),
]
FactList = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=2000)]] | None,
    Field(max_length=200),
]
TagList = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=100)]] | None,
    Field(max_length=50),
]


def memory_edit(
    memory: Memory,
    id: FragmentId,
    summary: Annotated[
        str | None, Field(min_length=1, max_length=1000, description="The new one sentence")
    ] = None,
    facts: Annotated[FactList, Field(description="Replace every fact line with these")] = None,
    add_facts: Annotated[FactList, Field(description="Fact lines to add")] = None,
    remove_facts: Annotated[
        FactList, Field(description="Fact lines to remove, as the fragment has them")
    ] = None,
    importance: Annotated[float | None, Field(ge=0, le=1, description="0 to 1")] = None,
    tags: Annotated[
        TagList, Field(description="Replace the tags with these; agent-memory always stays")
    ] = None,
    add_tags: Annotated[TagList, Field(description="Tags to add")] = None,
    remove_tags: Annotated[TagList, Field(description="Tags to remove")] = None,
    supersedes: Supersedes = None,
) -> CallToolResult:
    """Edit a memory fragment in the vault: its summary, facts, importance or tags. Only
    what is given changes; whatever else the file holds (a person's own edits and
    properties) stays as it is. Use it when a saved fragment is wrong or out of date,
    instead of saving a near-copy. Tags are written as Obsidian takes them (`needs review`
    becomes `needs-review`). With `supersedes` (alone or with an edit), the older fragment
    this one replaces is marked [superseded]."""
    edit = Edit(
        summary=summary,
        facts=None if facts is None else list(facts),
        add_facts=list(add_facts or []),
        remove_facts=list(remove_facts or []),
        importance=importance,
        tags=None if tags is None else list(tags),
        add_tags=list(add_tags or []),
        remove_tags=list(remove_tags or []),
    )
    try:
        entry = memory.fragments.edit_fragment(id, edit, supersedes=supersedes)
    except OSError as exc:
        raise ToolError(f"not edited: {exc}") from None
    view = present.entry_view(memory, entry)
    text = f"edited {view['id']}\n{view['summary']}\n\n{entry.body}"
    if supersedes is not None:
        view["supersedes"] = supersedes
        text += f"\nsupersedes: {supersedes} (marked [superseded])"
    return answer(view, text)


def memory_delete(memory: Memory, id: FragmentId) -> CallToolResult:
    """Delete a memory fragment: its file in the vault and everything memvault derived
    from it (search index, graph). The pipeline does not learn it again from the same
    events. Only fragments are deleted; session summaries and observations are not."""
    deleted = memory.fragments.delete_fragment(id)
    data = {"id": deleted.id, "path": deleted.path, "summary": deleted.summary}
    return answer(data, f"deleted {deleted.id} ({deleted.path})")


def memory_governance_delete(
    memory: Memory,
    memoryIds: Annotated[  # agentmemory's spelling
        Annotated[list[Annotated[str, Field(min_length=1, max_length=500)]], Field(max_length=200)]
        | Annotated[str, Field(max_length=50_000)],
        Field(description="Fragment ids to delete: a list, or one string separated by commas"),
    ],
    reason: Annotated[
        str | None, Field(max_length=1000, description="Why; said back in the answer")
    ] = None,
) -> CallToolResult:
    """Delete several memory fragments (agentmemory's governance delete), as memory_delete
    does each. Every id is checked first: when one names no fragment, nothing is deleted
    and the answer names it."""
    ids = memoryIds.split(",") if isinstance(memoryIds, str) else memoryIds
    ids = list(dict.fromkeys(i.strip() for i in ids if i.strip()))
    if not ids:
        raise ToolError("memoryIds names no fragment")
    problems = []
    for fragment_id in ids:
        try:
            memory.fragments.fragment_path(fragment_id)
        except InvalidInput as exc:
            problems.append(exc.message)
    if problems:
        raise ToolError(f"nothing deleted: {'; '.join(problems)}")
    deleted = [memory.fragments.delete_fragment(fragment_id) for fragment_id in ids]
    data = {
        "deleted": len(deleted),
        "requested": len(ids),
        "memoryIds": [d.id for d in deleted],
        "reason": reason,
    }
    lines = [f"deleted {len(deleted)} fragment(s)" + (f": {reason}" if reason else "")]
    lines += [f"- {d.id}" for d in deleted]
    return answer(data, "\n".join(lines))


def memory_recall(
    memory: Memory,
    query: Annotated[
        str | None,
        Field(
            max_length=4000,
            description="The task, in the user's words; omit for what matters most in the project",
        ),
    ] = None,
    project: ProjectFilter = None,
    budget: Annotated[
        int | None,
        Field(ge=50, le=50_000, description="Tokens the block may take (default from settings)"),
    ] = None,
) -> CallToolResult:
    """Recall the memory block for a task: the fragments, project summary, session
    summaries and observations most relevant to it, packed into a token budget. Read at
    start: call it before every task (any user message, even a bare file name, starts one)
    with the request as query and the project, and show the block's first line
    (`{read_line}`) to the user."""
    packed = memory.context.context(project=project, query=query, budget=budget)
    data = {
        "context": packed.text,
        "blocks": packed.blocks,
        "tokens": packed.tokens,
        "budget": packed.budget,
        "truncated": packed.truncated,
    }
    return answer(data, packed.text)


def _first_sentence(facts: list[str]) -> str:
    for fact in facts:
        if fact.strip():
            return _SENTENCE_END.split(fact.strip(), maxsplit=1)[0][:300]
    return ""
