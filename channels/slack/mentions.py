"""Broadcast mentions in what the bot posts to Slack become plain text.

Slack reads ``<!channel>``, ``<!here>``, ``<!everyone>`` and ``<!subteam^ID>`` in a
message's text as pings of a whole channel, workspace or user group. The model can be
led to write them (a user's "say <!channel> ...", a fetched page, a file), and Slack
keeps them through the mrkdwn escaping, which must keep links and user mentions: so the
bot could ping everyone. Here each becomes the words it stands for (``@channel``,
``@devs``), which Slack shows without notifying anyone, as Discord's answers ping no one.
A mention of one person (``<@U123>``) is left: that is how the bot addresses the asker.
"""

from __future__ import annotations

import re

_BROADCAST = re.compile(r"<!(here|channel|everyone)(?:\|[^<>]*)?>", re.I)
_GROUP = re.compile(r"<!subteam\^[^<>|]*(?:\|([^<>]*))?>", re.I)
_UNFINISHED = re.compile(r"<![^<>]*$")


def quiet(text: str) -> str:
    """``text`` with every broadcast or user-group mention as plain, pingless text."""
    if "<!" not in text:
        return text
    text = _BROADCAST.sub(lambda m: "@" + m.group(1).lower(), text)
    return _GROUP.sub(lambda m: "@" + (m.group(1) or "group").lstrip("@"), text)


def quiet_preview(text: str) -> str:
    """:func:`quiet` for a preview of an answer still being written: a mention not
    finished yet is held back (its end may make it a broadcast), so a streamed preview
    only ever grows."""
    return _UNFINISHED.sub("", quiet(text))
