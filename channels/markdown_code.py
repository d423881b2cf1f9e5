"""Where a Markdown answer's code is: what every converter must leave as written.

A platform converter rewrites the text around code (escapes, emphasis, links) and
must not touch the code itself: `rm *.log` turned into `rm _.log` shows the user the
wrong command. This finds code the way CommonMark does, which the converters' own
patterns did not: a fenced block opens with three or more backticks or tildes and
closes with a line of the same character at least as long (or the answer's end); a
code span is a run of N backticks closed by the next run of exactly N, within its
paragraph, and a run with no partner is plain text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})([^\n]*)$", re.M)
_TICKS = re.compile(r"`+")
_PARAGRAPH_END = re.compile(r"\n[ \t]*\n")

Region = tuple[int, int, bool]  # start, end, and whether it is a fenced block


def code_regions(markdown: str) -> list[Region]:
    """The fenced blocks and code spans of ``markdown``, in order, none overlapping."""
    regions: list[Region] = []
    pos = 0
    for start, end in _fenced_blocks(markdown):
        regions += _spans(markdown, pos, start)
        regions.append((start, end, True))
        pos = end
    return regions + _spans(markdown, pos, len(markdown))


def _fenced_blocks(markdown: str) -> Iterator[tuple[int, int]]:
    pos = 0
    while (opening := _FENCE.search(markdown, pos)) is not None:
        marker = opening.group(1)
        if marker[0] == "`" and "`" in opening.group(2):  # an info string has no backtick
            pos = opening.end() + 1
            continue
        closing = re.compile(rf"^ {{0,3}}{re.escape(marker[0])}{{{len(marker)},}}[ \t]*$", re.M)
        found = closing.search(markdown, opening.end() + 1)
        end = found.end() if found is not None else len(markdown)
        yield opening.start(), end
        pos = end + 1


def _spans(markdown: str, start: int, end: int) -> list[Region]:
    spans: list[Region] = []
    pos = start
    while (run := _TICKS.search(markdown, pos, end)) is not None:
        limit = _PARAGRAPH_END.search(markdown, run.end(), end)
        stop = limit.start() if limit is not None else end
        partner = _partner(markdown, run, stop)
        if partner is None:
            pos = run.end()
            continue
        spans.append((run.start(), partner, False))
        pos = partner
    return spans


def _partner(markdown: str, run: re.Match[str], stop: int) -> int | None:
    """Where the span ``run`` opens ends (after its closing run), or None."""
    width = len(run.group())
    for other in _TICKS.finditer(markdown, run.end(), stop):
        if len(other.group()) == width:
            return other.end()
    return None


def outside_code(markdown: str, change: Callable[[str], str], *, spans: bool = True) -> str:
    """``markdown`` with ``change`` applied to each stretch of text that is not code
    (``spans=False``: not in a fenced block; code spans are left to ``change``)."""
    out: list[str] = []
    pos = 0
    for start, end, fenced in code_regions(markdown):
        if not (fenced or spans):
            continue
        out += [change(markdown[pos:start]), markdown[start:end]]
        pos = end
    out.append(change(markdown[pos:]))
    return "".join(out)
