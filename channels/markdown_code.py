"""Where a Markdown answer's code is: what every converter must leave as written.

A platform converter rewrites the text around code (escapes, emphasis, links) and
must not touch the code itself: `rm *.log` turned into `rm _.log` shows the user the
wrong command. The code is found by a CommonMark parser, pyromark (pulldown-cmark,
the one telegramify-markdown renders Telegram's answers with), not by patterns: a
fenced block, an indented block (four spaces more than its list item: `#include
<stdio.h>` there reached Telegram as `#include \\<stdio.h>` and `a*b*c` Slack as
`a_b_c`), and a code span (a run of backticks closed by the next run as long). No
platform shows raw HTML, so a ``<`` is read as text: an HTML block would otherwise
hide the code inside it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

# What the parser reads instead: "<" as a letter (one byte, no markup) and a lone
# surrogate (which no parser takes) as U+FFFD (three bytes, as it takes in UTF-8).
_NOT_HTML = "x"
_SURROGATE = re.compile("[\ud800-\udfff]")
_Found = tuple[int, int, str | None]  # start, end, a block's body (a span: None)


@dataclass(frozen=True, slots=True)
class Code:
    """A code block or span: ``markdown[start:end]`` (a block from its first line's
    start when only indentation precedes it there, to its last line's end)."""

    start: int
    end: int
    block: bool  # a fenced or indented block, not a span
    body: str = ""  # a block's code as CommonMark reads it: no fences, no indentation


def code_regions(markdown: str) -> list[Code]:
    """The code blocks and code spans of ``markdown``, in order, none overlapping."""
    import pyromark  # a compiled extension (~5 ms to load): at the first answer, not before ready

    raw = markdown.encode("utf-8", "surrogatepass")  # the parser's offsets are bytes
    source = _SURROGATE.sub("\ufffd", markdown.replace("<", _NOT_HTML))
    found: list[_Found] = []
    body: list[str] | None = None
    for event, where in pyromark.events_with_range(source):
        if isinstance(event, str):  # a line break or a rule
            continue
        if "Text" in event:
            if body is not None:
                body.append(raw[where["start"] : where["end"]].decode("utf-8", "surrogatepass"))
        elif "Code" in event:
            found.append((where["start"], where["end"], None))
        elif "Start" in event and "CodeBlock" in event["Start"]:
            body = []
        elif "End" in event and event["End"] == "CodeBlock":
            found.append((where["start"], where["end"], "".join(body or ())))
            body = None
    if len(raw) != len(markdown):
        found = _in_characters(raw, found)
    return [_code(markdown, *region) for region in found]


def _in_characters(raw: bytes, found: list[_Found]) -> list[_Found]:
    """``found`` (in order) from UTF-8 byte offsets to string indices."""
    out: list[_Found] = []
    byte = char = 0
    for start, end, body in found:  # each byte is decoded once
        first = char + len(raw[byte:start].decode("utf-8", "surrogatepass"))
        char, byte = first + len(raw[start:end].decode("utf-8", "surrogatepass")), end
        out.append((first, char, body))
    return out


def _code(markdown: str, start: int, end: int, body: str | None) -> Code:
    if body is None:  # a span (the parser's range may take the blank after it)
        return Code(start, markdown.rfind("`", start, end) + 1, False)
    line = markdown.rfind("\n", 0, start) + 1
    if not markdown[line:start].strip(" \t"):
        start = line
    while end > start and markdown[end - 1] == "\n":
        end -= 1
    return Code(start, end, True, body)


def outside_code(markdown: str, change: Callable[[str], str], *, spans: bool = True) -> str:
    """``markdown`` with ``change`` applied to each stretch of text that is not code
    (``spans=False``: not in a code block; code spans are left to ``change``)."""
    out: list[str] = []
    pos = 0
    for code in code_regions(markdown):
        if code.block or spans:
            out += [change(markdown[pos : code.start]), markdown[code.start : code.end]]
            pos = code.end
    out.append(change(markdown[pos:]))
    return "".join(out)
