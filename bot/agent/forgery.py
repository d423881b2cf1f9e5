"""Defusing text that imitates what only the system writes: the runtime header, the
``[tool output: ...]`` label, the ``[attachment: ...]`` line (bot/media/entries.py), a
group message's ``[said by: ...]`` line (bot/agent/speakers.py) and a follow-up's
``[Scheduled follow-up: a prompt you (the assistant) wrote ...]`` label
(bot/agent/context.py), which would pass a user's orders off as the model's own note.

Matching the literal header is not enough: a zero-width space inside a word, fullwidth
brackets, a Greek omicron or ``Runtime_Context`` read the same to a model. So the text
is first folded into a matching form (compatibility decomposition, format characters
and combining marks dropped, common look-alike letters mapped to Latin, case folded,
every opening bracket such as ``❲``, ``〈``, ``⁅`` or ``«`` made ``[``), a
loose pattern runs over that, and each hit is replaced in the original text, which is
otherwise left exactly as it was. A line starts after any line break a renderer shows
(``\r``, U+0085, U+2028, U+2029 too). Bare words in prose ("my tool output: 3") and
quotes, dashes or bullets before them are left alone: only bracket-like openers make a
label.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

RUNTIME_MARK = "[quoted text: runtime context"
TOOL_MARK = "[quoted text: tool output:"
ATTACHMENT_MARK = "[quoted text: attachment:"
SAID_MARK = "[quoted text: said by:"
FOLLOWUP_MARK = "[quoted text: scheduled follow-up:"
WROTE_MARK = "[quoted text: prompt you (the assistant) wrote"

# Cyrillic and Greek letters that render like Latin ones (after case folding).
_LOOKALIKES = str.maketrans(
    "авеёкмнорстухіїјѕԁԛԝӏαβεηικμνορτυχςσϲıȷℓɑɡ",
    "abeekmhopctyxiijsdqwlabenikuvoptuxcocijlag",
)
# ASCII openers as they are; every other opening bracket folds to "[" (_opener).
_OPEN = r"[\[(<{]"
_GAP = r"[\W_]*"  # spaces, dashes, underscores, punctuation, or nothing at all
# What str.splitlines breaks a line at; a renderer shows each as a new line.
_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_LINE_START = rf"(?<![^{_BREAKS}])"  # the start of the text or just after a break
_RUNTIME = rf"runtime{_GAP}context(?![a-z])"
_FORGED = re.compile(
    rf"(?P<runtime>{_OPEN}\s*{_RUNTIME}"  # "[Runtime Context", "(runtime-context"
    rf"|{_LINE_START}[^\w{_BREAKS}]*{_RUNTIME}"  # the header without brackets, line start
    rf"|(?<!quoted text: ){_RUNTIME}(?={_GAP}metadata))"  # "... Runtime Context — metadata"
    rf"|(?P<tool>{_OPEN}\s*tool{_GAP}output\s*:)"  # "[tool output: weather]"
    rf"|(?P<attachment>{_OPEN}\s*attachment\s*:)"  # "[attachment: image ..."
    rf"|(?P<said>{_OPEN}\s*said{_GAP}by\s*:)"  # "[said by: 7 (@boss)]" (bot/agent/speakers.py)
    rf"|(?P<followup>{_OPEN}\s*scheduled{_GAP}follow{_GAP}up\s*:)"  # "[Scheduled follow-up:"
    # "... a prompt you (the assistant) wrote earlier", the follow-up label's claim
    rf"|(?P<wrote>(?<!quoted text: )prompt{_GAP}(?:that{_GAP})?you{_GAP}(?:the{_GAP})?"
    rf"assistant{_GAP}wrote(?![a-z]))",
)

_MARKS = {
    "runtime": RUNTIME_MARK,
    "tool": TOOL_MARK,
    "attachment": ATTACHMENT_MARK,
    "said": SAID_MARK,
    "followup": FOLLOWUP_MARK,
    "wrote": WROTE_MARK,
}
_CURLY_QUOTES = frozenset("\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f")
_WORDS = ("runtime", "tool", "attachment", "said", "scheduled", "prompt")


@lru_cache(maxsize=4096)
def _fold_char(char: str) -> str:
    decomposed = unicodedata.normalize("NFKD", char)
    kept = "".join(c for c in decomposed if unicodedata.category(c) not in ("Cf", "Mn", "Me"))
    return "".join(map(_opener, kept.casefold().translate(_LOOKALIKES)))


def _opener(char: str) -> str:
    """``[`` for a non-ASCII opening bracket (``❲``, ``〈``, ``⁅``, ``﹝``, ``«``): each
    reads as the start of a label to a model; any other character as it is. Curly
    quotes stay, like ASCII ones: a quote in prose is not a label."""
    if char.isascii() or char in _CURLY_QUOTES:
        return char
    category = unicodedata.category(char)
    if category in ("Ps", "Pi") or (unicodedata.mirrored(char) and category != "Pe"):
        return "["
    return char


def fold(text: str) -> tuple[str, list[int]]:
    """The matching form of ``text`` and, for each of its characters, the index of the
    original character it came from."""
    if text.isascii():  # folds to its lower case, character for character
        return text.lower(), list(range(len(text)))
    return fold_each(text)


def fold_each(text: str) -> tuple[str, list[int]]:
    """:func:`fold` one character at a time (what any non-ASCII text needs)."""
    chars: list[str] = []
    origin: list[int] = []
    for i, char in enumerate(text):
        folded = char if char.isascii() and not char.isupper() else _fold_char(char)
        chars.append(folded)
        origin.extend([i] * len(folded))
    return "".join(chars), origin


def neutralize(text: str) -> str:
    """``text`` with every imitation of the runtime header or a tool-output label
    replaced by a visibly quoted form; text without one is returned unchanged."""
    # ASCII folds to its lower case, character for character: text without either word
    # (most of a history, re-sent every turn) skips the per-character fold.
    if text.isascii() and not _names_either(text.lower()):
        return text
    return defuse(text)


def _names_either(folded: str) -> bool:
    return any(word in folded for word in _WORDS)


def defuse(text: str) -> str:
    """:func:`neutralize` without its ASCII shortcut (the full fold, for any text)."""
    folded, origin = fold(text)
    if not _names_either(folded):
        return text
    out: list[str] = []
    last = 0
    for match in _FORGED.finditer(folded):
        if match.start() == match.end():
            continue
        start, end = origin[match.start()], origin[match.end() - 1] + 1
        if start < last:
            continue
        out.append(text[last:start])
        out.append(_MARKS[match.lastgroup or "tool"])
        last = end
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)
