"""Markdown table cells: split a row, escape a value so it stays in its cell."""

from __future__ import annotations

import re

_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def split_row(line: str) -> list[str] | None:
    """The cells of a table row ``| a | b |``, unescaped; None if the line is not a row.

    ``\\|`` inside a cell is a literal pipe, as Obsidian renders it.
    """
    text = line.strip().lstrip("\ufeff")  # a byte order mark before the first row
    if not text.startswith("|"):
        return None
    inner = text[1:]
    if inner.endswith("|") and not inner.endswith("\\|"):
        inner = inner[:-1]
    if "\\|" not in inner:
        return [cell.strip() for cell in inner.split("|")]
    return [cell.replace("\\|", "|").strip() for cell in _UNESCAPED_PIPE.split(inner)]


def cell_text(value: str) -> str:
    """What a cell can hold of ``value``: one line, runs of white space as one space."""
    return " ".join(value.split())


def escape_cell(value: str) -> str:
    """A value safe inside one cell: one line, pipes escaped."""
    return cell_text(value).replace("|", "\\|")


def format_row(cells: list[str]) -> str:
    return "| " + " | ".join(escape_cell(cell) for cell in cells) + " |"


def is_separator(cells: list[str]) -> bool:
    return bool(cells) and all(cell and set(cell) <= set("-: ") for cell in cells)
