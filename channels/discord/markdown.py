"""The model's Markdown as a Discord client shows it.

Discord renders most of what models write (bold, code, lists, quotes, headings, masked
links) but not tables: a comparison the model laid out as a table reached the user as
rows of pipes and dashes. A table is sent as a code block with its columns aligned,
which a monospace font shows as a table; widths are measured with wcwidth (the
library terminals use), so CJK text and emoji line up too. Tables inside fenced code
are left as written.
"""

from __future__ import annotations

import re

from wcwidth import wcswidth

from channels.markdown_code import outside_code
from channels.markdown_table import is_delimiter, row_cells

_BOLD = re.compile(r"\*\*(.+?)\*\*|__(.+?)__")
_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\s]+)\)")


def for_discord(markdown: str) -> str:
    """``markdown`` with each table outside fenced code turned into an aligned block."""
    return outside_code(markdown, _tables, spans=False)


def _tables(text: str) -> str:
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        header = _cells(lines[i])
        if header and i + 1 < len(lines) and is_delimiter(lines[i + 1], lines[i]):
            rows = [header]
            i += 2
            while i < len(lines) and (row := _cells(lines[i])):
                rows.append(row)
                i += 1
            out.append(_block(rows))
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)


def _cells(line: str) -> list[str]:
    """A table row's cells as the block shows them (no pipe: not a row)."""
    return [_plain(cell) for cell in row_cells(line)]


def _plain(cell: str) -> str:
    """A cell as text: markup a code block would show literally is taken off."""
    cell = _BOLD.sub(lambda m: m.group(1) or m.group(2), cell)
    cell = _LINK.sub(r"\1 (\2)", cell)
    if len(cell) > 1 and cell.startswith("`") and cell.endswith("`"):
        cell = cell.strip("`")
    return cell.replace("```", "'''")  # would end the block


def _width(text: str) -> int:
    width = wcswidth(text)
    return width if width >= 0 else len(text)


def _block(rows: list[list[str]]) -> str:
    count = max(len(row) for row in rows)
    rows = [row + [""] * (count - len(row)) for row in rows]
    widths = [max(_width(row[c]) for row in rows) for c in range(count)]

    def line(row: list[str]) -> str:
        cells = zip(row, widths, strict=True)
        return " | ".join(cell + " " * (w - _width(cell)) for cell, w in cells).rstrip()

    rule = "-+-".join("-" * w for w in widths)
    return "\n".join(["```", line(rows[0]), rule, *map(line, rows[1:]), "```"])
