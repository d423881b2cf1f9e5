"""Text from outside, made safe for what takes it: every UTF-8 sink, a row id.

``json.loads('"\\ud800"')`` gives a str holding a lone surrogate; Python carries it
happily until something encodes it as UTF-8 (a file write, SQLite), which raises. A NUL
(U+0000) is valid Unicode, but PostgreSQL refuses it in any text value where SQLite keeps
it. Text from outside (a message, tool output, a history row) passes through
:func:`valid_unicode` before it is written, so both backends store the same text.
"""

from __future__ import annotations

import re
import unicodedata

_UNFIT = re.compile("[\x00\ud800-\udfff]")


def valid_unicode(text: str) -> str:
    """``text`` with each NUL, and each surrogate that is not half of a pair, replaced
    by U+FFFD (``text`` itself when it holds none)."""
    if not _UNFIT.search(text):
        return text  # the common case costs one scan
    paired = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return paired.replace("\x00", "\ufffd")


# Letters and symbols drawn as nothing, used to post "empty" messages: the Hangul fillers
# (U+115F, U+1160, U+3164, U+FFA0) and the blank Braille pattern (U+2800).
_BLANK_GLYPHS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def shows_nothing(text: str) -> bool:
    """Whether ``text`` holds nothing to read: only whitespace, format characters
    (category Cf: U+200B zero width space, U+2060 word joiner, U+FEFF...) and blank
    glyphs (U+3164 Hangul filler, U+2800 Braille blank). Those pass a ``strip()``
    check, and a message, a reply, a reminder or a fact of them shows an empty line."""
    return all(
        ch.isspace() or ch in _BLANK_GLYPHS or unicodedata.category(ch) == "Cf" for ch in text
    )


MAX_NUMBER = 2**63 - 1  # the largest row id either store can hold (SQLite, bigint)


def row_number(raw: str) -> int | None:
    """``raw`` as a number a person typed for a row (a reminder, a fact, a version):
    ASCII digits only (``str.isdigit`` also takes "²", which ``int`` refuses) and no
    larger than a store's row id can be (a larger one overflowed SQLite's INTEGER);
    None otherwise."""
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 19:
        return None
    value = int(raw)
    return value if value <= MAX_NUMBER else None


_MARKUP = re.compile(r"([\\`*_~|\[\]])")
_LINE_MARK = re.compile(r"^([ \t]*)([#>+-]|\d+[.)])", re.M)


def markdown_literal(text: str) -> str:
    """``text`` (a person's own words, as a reminder keeps them) as Markdown that shows
    exactly those words: every character Markdown would read as formatting is
    backslash-escaped, as are a line's list, quote and heading marks. Every platform's
    converter, and a platform reading Markdown itself, shows an escaped character as itself: a
    reminder to rename ``my_report_v2`` and ``__init__.py`` came with the name in
    italics and ``init`` in bold."""
    escaped = _MARKUP.sub(r"\\\1", text)
    return _LINE_MARK.sub(lambda m: f"{m.group(1)}{m.group(2)[:-1]}\\{m.group(2)[-1]}", escaped)
