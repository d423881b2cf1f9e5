"""Pings the bot's own words may not make: Slack's mention sequences become plain text.

The model's text is steered by whoever it reads (a group member, a fetched page, a
document), and Slack acts on control sequences in what a bot posts: ``<!channel>``,
``<!here>`` and ``<!everyone>`` notify every member, ``<!subteam^ID>`` a user group,
``<@U...>`` one person. Discord's adapter posts with no pings allowed at all; this does
the same for Slack by writing each such sequence as the words it stands for
(``@channel``, ``@oncall``, ``@U0123``), which Slack shows but never notifies. Links,
channel references (``<#C...>``) and dates (``<!date^...>``) are kept.
"""

from __future__ import annotations

import re

# <!name>, <!name|label>, <@U123>, <@U123|label>: a mention as Slack reads it.
MENTION = re.compile(r"<([!@])([^<>|]*)(?:\|([^<>]*))?>")
_KEPT = "date^"  # <!date^...|fallback>: a formatted time, no one is notified


def is_ping(sequence: str) -> bool:
    """Whether ``sequence`` (a whole ``<...>``) notifies someone when a bot posts it."""
    found = MENTION.fullmatch(sequence)
    return found is not None and not found.group(2).startswith(_KEPT)


def plain_mentions(text: str) -> str:
    """``text`` with every mention sequence written as plain words (no one is pinged)."""
    return MENTION.sub(_plain, text)


def _plain(found: re.Match[str]) -> str:
    kind, name, label = found.groups()
    if kind == "!" and name.startswith(_KEPT):
        return found.group()
    shown = (label or "").strip() or name.rsplit("^", 1)[-1].strip() or "someone"
    return "@" + shown.removeprefix("@")


_UNFINISHED = re.compile(r"<[!@][^<>]*$")


def plain_preview(text: str) -> str:
    """:func:`plain_mentions` for an answer still being written: a mention not finished
    yet is held back (its end decides what it is), so a streamed preview only grows."""
    return _UNFINISHED.sub("", plain_mentions(text))
