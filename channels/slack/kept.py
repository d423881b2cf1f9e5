"""What the mrkdwn converter must not rewrite, taken out of the Markdown and put back.

markdown-to-mrkdwn applies line regexes to everything outside ``` fences; these parts
are swapped for placeholders (private-use characters no answer contains) before it
runs and restored after:

- code: code blocks (``` or ~~~ of any length, or indented: Slack knows only ```, so
  a block comes back as one) and code spans, found as CommonMark finds them;
- links and images: ``[label](url)`` with parentheses in the URL and no ``[`` or ``]``
  in the label, as ``<url|label>`` with the label escaped (Slack ends a link at its
  first ``>``); a link that is not web or mail is its words and the address;
- a ``*`` that CommonMark would not read as emphasis (``3 * 4``, ``*.py and *.txt``),
  or one inside a word (``2*3*4``, where Slack shows no emphasis): the converter
  paired any two stars on a line into an italic;
- a backslash-escaped character (``\\*``, ``\\_``): CommonMark's way of writing one
  literally, which the converter does not know; it comes back without the backslash.

They come back after the rest is escaped for Slack, each as Slack must read it: code
and characters with ``& < >`` as entities (``<!here>`` in code is shown as written and
pings no one), a link as ``<url|label>``.
"""

from __future__ import annotations

import re
import unicodedata

from channels.markdown_code import code_regions

_MARK = re.compile("\ue000(\\d+)\ue001")
_LINK = re.compile(
    r"!?\[([^\[\]\n]+)\]\(\s*<?((?:[^()\s<>]|\([^()\s<>]*\))+)>?(?:\s+\"[^\"\n]*\")?\s*\)"
)
_WEB = re.compile(r"(?:https?://|mailto:)\S+", re.IGNORECASE)
_STAR = re.compile(r"(?<!\*)\*(?!\*)")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
_BULLET = re.compile(r"^[ \t]*\*[ \t]", re.M)
_QUOTE_GT = re.compile(r"(?<!^)(?<!\n)>")  # a ">" that opens no line: no block quote
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


class Kept:
    """The parts of one chunk taken out, by placeholder number."""

    def __init__(self) -> None:
        self._parts: list[str] = []

    def _hold(self, text: str) -> str:
        self._parts.append(text)
        return f"\ue000{len(self._parts) - 1}\ue001"

    def take(self, markdown: str) -> str:
        """``markdown`` with its code, links and literal stars held."""
        out: list[str] = []
        pos = 0
        for code in code_regions(markdown):
            out.append(self._prose(markdown[pos : code.start]))
            written = markdown[code.start : code.end]
            # A block in a quote is left as written: its lines carry the quote's marks.
            alone = code.start == 0 or markdown[code.start - 1] == "\n"
            shown = _as_backticks(code.body) if code.block and alone else written
            out.append(self._hold(escape_text(shown)))
            pos = code.end
        out.append(self._prose(markdown[pos:]))
        return "".join(out)

    def restore(self, converted: str) -> str:
        """The converter's output with every held part back (a link's label may hold
        code, so until none is left)."""
        for _ in range(3):
            if "\ue000" not in converted:
                break
            converted = _MARK.sub(lambda m: self._parts[int(m.group(1))], converted)
        return converted

    def _prose(self, text: str) -> str:
        text = _ESCAPED.sub(lambda m: self._hold(_ENTITIES.get(m.group(1), m.group(1))), text)
        return self._stars(_LINK.sub(self._link, text))

    def _link(self, found: re.Match[str]) -> str:
        label, url = found.group(1), found.group(2)
        if not _WEB.fullmatch(url):
            return f"{label} ({url})"
        label = label.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        return self._hold(f"<{url}|{label}>")

    def _stars(self, text: str) -> str:
        bullets = {m.end() - 2 for m in _BULLET.finditer(text)}
        stars = [m.start() for m in _STAR.finditer(text) if m.start() not in bullets]
        # Slack shows no emphasis inside a word: a star between letters or digits is one.
        inside = {pos for pos in stars if _in_word(text, pos)}
        literal = inside.union(_unpaired(text, [pos for pos in stars if pos not in inside]))
        for pos in sorted(literal, reverse=True):  # from the end: the rest stay in place
            text = text[:pos] + self._hold("*") + text[pos + 1 :]
        return text


def escape_text(text: str) -> str:
    """``text`` with ``& < >`` as the entities Slack requires, so it reads no link or
    mention in it; a ">" opening a line stays (a block quote in mrkdwn)."""
    return _QUOTE_GT.sub("&gt;", text.replace("&", "&amp;").replace("<", "&lt;"))


def _as_backticks(body: str) -> str:
    """A code block as Slack writes one: ``` on its own lines around its code."""
    return "\n".join(["```", body.removesuffix("\n"), "```"])


def _unpaired(text: str, stars: list[int]) -> list[int]:
    """Of the single stars at ``stars``, those CommonMark would not pair into emphasis
    (within a line: one that may open waits for the next that may close)."""
    literal: list[int] = []
    opener: int | None = None
    for pos in stars:
        before = text[pos - 1] if pos else "\n"
        after = text[pos + 1] if pos + 1 < len(text) else "\n"
        if before == "\n" and opener is not None:  # a new line: the open one stays text
            literal.append(opener)
            opener = None
        if opener is not None and _flanks(before, after):
            opener = None  # a pair: emphasis
        elif _flanks(after, before):
            if opener is not None:
                literal.append(opener)
            opener = pos
        else:
            literal.append(pos)
    return literal + ([opener] if opener is not None else [])


def _in_word(text: str, pos: int) -> bool:
    return 0 < pos < len(text) - 1 and text[pos - 1].isalnum() and text[pos + 1].isalnum()


def _flanks(inner: str, outer: str) -> bool:
    """A star with ``inner`` on the side of its text and ``outer`` on the other can
    delimit emphasis on that side (CommonMark's left/right-flanking rule)."""
    if inner.isspace():
        return False
    return not _punctuation(inner) or outer.isspace() or _punctuation(outer)


def _punctuation(char: str) -> bool:
    return unicodedata.category(char)[0] in "PS"
