"""The session board, ``memory/index.md``: one table row per agent session.

A board file is parsed into the text around the table and the table's rows, each row
keeping its original line. Changes touch only the intended row; every other byte, rows
written by hand or by other tools included, stays as it was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from memvault.domain import BoardRow
from memvault.language import manual_summaries, placeholder_summaries, placeholder_topics
from memvault.vault.table import format_row, is_separator, split_row

COLUMNS = (
    "Session ID",
    "Agent Name",
    "Topic",
    "Summary",
    "Keywords",
    "Status",
    "Referenced By",
    "Started At",
    "Updated At",
)
NOBODY = "-"
BOARD_TAG = "memvault/board"
# What registration writes for a row nobody described yet (a board writes its own
# language's, ``words``), recognised in every language MEMVAULT_LANGUAGE offers.
UNSET_TOPICS = placeholder_topics()
AUTO_SUMMARIES = placeholder_summaries()
TIME_FORMAT = "%Y-%m-%d %H:%M"

SESSION_ID = re.compile(r"\d{4}-\d{2}-\d{2}-\d{4}-[a-z0-9][a-z0-9-]*")
_AGENT_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")


class BoardFormatError(ValueError):
    """``memory/index.md`` has a table memvault cannot safely change."""


def row_from_cells(cells: list[str]) -> BoardRow:
    """A row from its nine cells, in ``COLUMNS`` order."""
    return BoardRow(*cells[:6], parse_references(cells[6]), cells[7], cells[8])


def row_cells(row: BoardRow) -> list[str]:
    return [
        row.session_id,
        row.agent_name,
        row.topic,
        row.summary,
        row.keywords,
        row.status,
        format_references(row.referenced_by),
        row.started_at,
        row.updated_at,
    ]


def parse_references(cell: str) -> list[str]:
    if cell in ("", NOBODY):
        return []
    refs = [part.strip() for part in cell.split(",")]
    return [ref for ref in refs if ref and ref != NOBODY]


def format_references(refs: list[str]) -> str:
    return ", ".join(refs) if refs else NOBODY


def is_placeholder_summary(summary: str) -> bool:
    """Whether a Summary is one registration writes for a row nobody described yet."""
    return summary.strip() in ("", *AUTO_SUMMARIES, *manual_summaries())


# The words registration writes in Keywords beside the host's (``cursor-agent``…).
PLACEHOLDER_KEYWORDS = frozenset({"sessionstart", "manual-registration", "session-snapshot"})
_HOST_KEYWORD = re.compile(r"[a-z0-9-]*agent")


def is_placeholder_keywords(keywords: str) -> bool:
    """Whether a Keywords cell says nothing yet: empty, or only registration's words and
    the host's (``sessionStart, claude-code-agent``)."""
    terms = [term.strip() for term in keywords.split(",") if term.strip()]
    return all(
        term.lower() in PLACEHOLDER_KEYWORDS or _HOST_KEYWORD.fullmatch(term) for term in terms
    )


def format_time(moment: datetime) -> str:
    return moment.strftime(TIME_FORMAT)


def parse_time(text: str) -> datetime | None:
    """Read a board time (``2026-05-25 13:18``, ISO-8601 with or without zone, or a date)."""
    value = text.strip()
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("/", "-"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.astimezone()


def agent_name(name: str) -> str:
    """A stable agent name: lower case, hyphens for spaces; refuses anything else."""
    normal = "-".join(name.strip().lower().split())
    if not _AGENT_NAME.fullmatch(normal):
        raise ValueError(
            f"agent name {name!r} must be letters, digits and hyphens (e.g. cursor-main-agent)"
        )
    return normal


@dataclass(slots=True)
class Board:
    """A parsed ``memory/index.md``: its lines, where the table is, and its rows.

    Parsing only finds each row's line and Session ID; a row's other cells are read when
    it is asked for, so an operation on one row of a long board stays cheap.
    """

    text: str
    lines: list[str]
    newline: str
    table_start: int  # index of the first row line
    table_end: int  # index of the first line after the table
    row_lines: dict[str, list[int]]  # session id → line indexes (several if duplicated)
    _parsed: dict[int, BoardRow | None] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str | None) -> Board:
        text = text or ""
        newline = "\r\n" if "\r\n" in text else "\n"
        lines = _lines(text)
        header = _find_header(lines)
        if header is None:
            lines, header = _with_new_table(lines, newline)
        row_lines: dict[str, list[int]] = {}
        index = start = header + 2
        while index < len(lines):
            line = lines[index].strip().lstrip("\ufeff")
            if not line.startswith("|"):
                break
            session_id = line[1:].split("|", 1)[0].strip()
            if session_id:
                row_lines.setdefault(session_id, []).append(index)
            index += 1
        return cls(text, lines, newline, start, index, row_lines)

    def _row_at(self, index: int) -> BoardRow | None:
        if index not in self._parsed:
            cells = split_row(self.lines[index])
            ok = cells is not None and len(cells) == len(COLUMNS)
            self._parsed[index] = row_from_cells(cells) if ok else None
        return self._parsed[index]

    @property
    def rows(self) -> list[BoardRow]:
        """Every readable row, in table order."""
        rows = (self._row_at(i) for i in range(self.table_start, self.table_end))
        return [row for row in rows if row is not None]

    @property
    def unreadable(self) -> list[str]:
        """Table lines that are not rows of nine cells."""
        return [
            self.lines[i].rstrip("\r\n")
            for i in range(self.table_start, self.table_end)
            if self._row_at(i) is None
        ]

    def get(self, session_id: str) -> BoardRow | None:
        positions = self.row_lines.get(session_id)
        if not positions:
            return None
        if len(positions) > 1:
            raise BoardFormatError(
                f"memory/index.md has {len(positions)} rows for {session_id}; "
                "merge them by hand before memvault changes this session"
            )
        row = self._row_at(positions[0])
        if row is None:
            raise BoardFormatError(
                f"memory/index.md: the row of {session_id} does not have the board's nine "
                "cells; fix it by hand before memvault changes this session"
            )
        return row

    def render(self) -> str:
        return "".join(self.lines)

    @property
    def ends_file(self) -> bool:
        """The table is the end of the file as it is on disk, so a new row is an append."""
        return self.table_end == len(self.lines) and self.render() == self.text

    def appended_line(self, row: BoardRow) -> str:
        """What appending ``row`` to a board that ``ends_file`` adds to the file."""
        line = format_row(row_cells(row)) + self.newline
        return line if not self.lines or self.lines[-1].endswith("\n") else self.newline + line

    def appended(self, row: BoardRow) -> str:
        lines = list(self.lines)
        if lines and self.table_end > 0 and not lines[self.table_end - 1].endswith("\n"):
            lines[self.table_end - 1] += self.newline
        lines.insert(self.table_end, format_row(row_cells(row)) + self.newline)
        return "".join(lines)

    def changed(
        self,
        replace: list[BoardRow] = (),  # type: ignore[assignment]
        remove: set[str] | frozenset[str] = frozenset(),
    ) -> str:
        """The file with some rows rewritten and some removed; every other byte unchanged."""
        lines = list(self.lines)
        for row in replace:
            self.get(row.session_id)  # refuses duplicated rows
            (index,) = self.row_lines[row.session_id]
            ending = lines[index][len(lines[index].rstrip("\r\n")) :]
            lines[index] = format_row(row_cells(row)) + ending
        drop = set()
        for session_id in remove:
            self.get(session_id)
            drop.update(self.row_lines.get(session_id, []))
        return "".join(line for i, line in enumerate(lines) if i not in drop)


def rows_in(text: str, session_ids: set[str]) -> dict[str, list[BoardRow]]:
    """The rows of the given sessions found in ``text``, without parsing the whole board."""
    found: dict[str, list[BoardRow]] = {sid: [] for sid in session_ids}
    for line in text.split("\n"):
        if "|" not in line or not any(sid in line for sid in session_ids):
            continue
        cells = split_row(line)
        if cells and len(cells) == len(COLUMNS) and cells[0] in found:
            found[cells[0]].append(row_from_cells(cells))
    return found


def _lines(text: str) -> list[str]:
    """Lines with their endings, split on newlines only: U+2028 and the other characters
    ``str.splitlines`` also breaks on may sit inside a hand-written cell."""
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


_FENCE = re.compile(r"\s{0,3}(`{3,}|~{3,})")
_CONFLICT = re.compile(r"(<{7}|>{7})(\s|$)|={7}\s*$")
LOOKALIKE_COLUMNS = 6  # a table naming this many board columns is a misspelt board
_BOARD_WORDS = {" ".join(c.lower().split()) for c in COLUMNS}


def _find_header(lines: list[str]) -> int | None:
    """The line of the board's header, None if the file has no board table yet.

    Tables inside code fences are examples, not the board. A table that looks like the
    board but is not exactly it (a renamed or respaced column, a missing one), conflict
    markers, or CR-only line endings are refused with the line to fix: adding a second
    table would hide the rows of the first."""
    if len(lines) == 1 and "\r" in lines[0].rstrip("\r"):
        raise BoardFormatError(
            "memory/index.md: the file uses old Mac (CR-only) line endings; save it with "
            "LF or CRLF line endings"
        )
    header, fence = None, None
    for index, line in enumerate(lines):
        if opening := _FENCE.match(line):
            marker = opening.group(1)
            if fence is None:
                fence = marker
            elif (
                marker[0] == fence[0]
                and len(marker) >= len(fence)
                and not line.strip()[len(marker) :].strip(marker[0] + " \t")
            ):
                fence = None
            continue
        if fence is not None:
            continue
        if _CONFLICT.match(line):
            raise BoardFormatError(
                f"memory/index.md line {index + 1}: a merge-conflict marker; resolve the "
                "conflict before memvault changes the board"
            )
        if header is not None or (cells := split_row(line)) is None:
            continue
        if [c.lower() for c in cells] == [c.lower() for c in COLUMNS]:
            separator = split_row(lines[index + 1]) if index + 1 < len(lines) else None
            if separator is None or not is_separator(separator) or len(separator) != len(COLUMNS):
                raise BoardFormatError(
                    f"memory/index.md line {index + 2}: the board header has no separator row"
                )
            header = index
            continue
        named = {" ".join(c.lower().split()) for c in cells} & _BOARD_WORDS
        if "session id" in named or len(named) >= LOOKALIKE_COLUMNS:
            raise BoardFormatError(
                f"memory/index.md line {index + 1}: the board table must have exactly these "
                "columns, in this order: " + " | ".join(COLUMNS)
            )
    return header


def _with_new_table(lines: list[str], newline: str) -> tuple[list[str], int]:
    """Lines with an empty board table added at the end (a new file gets frontmatter that
    never changes, so Dataview and tag searches find the board while a new row stays an
    append, and a heading)."""
    lines = list(lines)
    if not lines:
        lines = [
            f"---{newline}",
            f"tags:{newline}",
            f"  - {BOARD_TAG}{newline}",
            f"---{newline}",
            f"# Memory Index{newline}",
            newline,
        ]
    else:
        if not lines[-1].endswith("\n"):
            lines[-1] += newline
        if lines[-1].strip():
            lines.append(newline)
    header = len(lines)
    lines.append(format_row(list(COLUMNS)) + newline)
    lines.append("|" + "---|" * len(COLUMNS) + newline)
    return lines, header
