"""The side-by-side diff of two persona texts, as an HTML table of changed lines with
some context.

Built from :class:`difflib.SequenceMatcher`'s line opcodes, with no matching inside
lines: :class:`difflib.HtmlDiff` matches every changed line against its neighbours
character by character, roughly cubic in the lines changed (250 short lines took 15 s,
400 took 81 s), and its page held the event loop all that time.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from markupsafe import Markup, escape

CONTEXT = 3  # unchanged lines shown around each change
_CELL = '<td class="diff_header">{}</td><td class="line{}">{}</td>'


def side_by_side(old: str, new: str, old_name: str, new_name: str) -> Markup:
    """A table: the old text's lines on the left, the new text's on the right (escaped),
    each changed line marked (``diff_sub`` gone, ``diff_add`` added, ``diff_chg``
    replaced), hunks apart by a gap row."""
    a, b = old.splitlines(), new.splitlines()
    head = Markup(
        '<table class="diff"><thead><tr><th colspan="2" class="diff_header">{}</th>'
        '<th colspan="2" class="diff_header">{}</th></tr></thead><tbody>'
    ).format(old_name, new_name)
    matcher = difflib.SequenceMatcher(None, a, b)
    groups = [] if a == b else list(matcher.get_grouped_opcodes(CONTEXT))
    rows: list[str] = []
    for at, group in enumerate(groups):
        if at:
            rows.append('<tr><td colspan="4" class="diff_header gap">…</td></tr>')
        for tag, i1, i2, j1, j2 in group:
            rows.extend(_rows(tag, a, range(i1, i2), b, range(j1, j2)))
    if not groups:
        rows.append('<tr><td colspan="4" class="diff_header">no differences</td></tr>')
    return head + Markup("".join(rows)) + Markup("</tbody></table>")


def _rows(tag: str, a: list[str], left: range, b: list[str], right: range) -> Iterator[str]:
    """One opcode's rows: its lines side by side, a side with fewer left blank."""
    marks = {"equal": ("", ""), "delete": (" diff_sub", ""), "insert": ("", " diff_add")}
    old_mark, new_mark = marks.get(tag, (" diff_chg", " diff_chg"))
    for n in range(max(len(left), len(right))):
        cells = [
            _cell(a, left, n, old_mark if tag != "replace" or n < len(right) else " diff_sub"),
            _cell(b, right, n, new_mark if tag != "replace" or n < len(left) else " diff_add"),
        ]
        yield f"<tr>{''.join(cells)}</tr>"


def _cell(lines: list[str], span: range, n: int, mark: str) -> str:
    """The line number and text of the ``n``-th line of ``span``, or two empty cells."""
    if n >= len(span):
        return _CELL.format("", "", "")
    return _CELL.format(span[n] + 1, mark, escape(lines[span[n]]))
