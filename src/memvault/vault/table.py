"""Markdown table cells: split a row, escape a value so it stays in its cell."""

from __future__ import annotations


def split_row(line: str) -> list[str] | None:
    """The cells of a table row ``| a | b |``, unescaped; None if the line is not a row.

    ``\\|`` inside a cell is a literal pipe, as Obsidian renders it.
    """
    text = line.strip()
    if not text.startswith("|"):
        return None
    cells, current, i = [], [], 1
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text) and text[i + 1] == "|":
            current.append("|")
            i += 2
            continue
        if char == "|":
            cells.append("".join(current).strip())
            current = []
        else:
            current.append(char)
        i += 1
    if current and "".join(current).strip():
        cells.append("".join(current).strip())  # a row without its closing pipe
    return cells


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
