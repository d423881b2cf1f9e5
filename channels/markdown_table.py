"""GFM table lines, as the splitter and Discord's converter both read them.

A table is a header row, a delimiter row with as many cells (``|---|:-:|``), then the
rows after it that hold a pipe. This is line-local: it does not know the code around
a line, so its callers ask it only about lines outside code.
"""

from __future__ import annotations

import re

_DELIMITER = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")


def row_cells(line: str) -> list[str]:
    """A table row's cells as written, each stripped (a line with no pipe: no row)."""
    stripped = line.strip()
    if "|" not in stripped:
        return []
    stripped = stripped.removeprefix("|").removesuffix("|")
    return [cell.strip().replace("\\|", "|") for cell in _CELL_SPLIT.split(stripped)]


def is_delimiter(line: str, header: str) -> bool:
    """Whether ``line`` is the delimiter row under ``header``: a table starts there."""
    if not _DELIMITER.match(line):
        return False
    columns = len(row_cells(header))
    return columns > 0 and len(row_cells(line)) == columns
