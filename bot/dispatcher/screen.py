"""What the journal keeps of a message that will be refused: as little as needed.

A channel hands every inbound message to the journal before acknowledging it, and the
access and size middlewares refuse later, in the dispatcher. Without this screen a
stranger's message, or a 5 MB paste, would sit in the inbox in full until pruned. The
screen runs first: a message that access control will refuse keeps only a short head,
an oversize one only what the size guard needs to refuse it (its original length).
Its text is made valid for every store first (:func:`bot.text.valid_unicode`: a NUL,
which PostgreSQL refuses, is kept as U+FFFD on either backend).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable

from bot.messages import InboundMessage
from bot.text import valid_unicode

REFUSED_KEEP_CHARS = 200  # enough for the log line and a pairing command
TEXT_CHARS = "text_chars"  # extras key: the length the text had before it was cut


def original_length(msg: InboundMessage) -> int:
    """The text's length as sent, even when the journal kept only part of it."""
    return int(msg.extras.get(TEXT_CHARS, len(msg.text)))


class JournalScreen:
    """Wraps the journal's ``put_inbound``: cuts what is refused before it is written."""

    def __init__(
        self,
        allowed: Callable[[InboundMessage], bool],
        max_chars: int,
        put_inbound: Callable[[InboundMessage], Awaitable[None]],
    ) -> None:
        self._allowed = allowed
        self._max = max_chars
        self._put = put_inbound

    def screen(self, msg: InboundMessage) -> InboundMessage:
        if (text := valid_unicode(msg.text)) is not msg.text:
            msg = dataclasses.replace(msg, text=text)
        keep = self._max if self._allowed(msg) else min(self._max, REFUSED_KEEP_CHARS)
        if len(msg.text) <= keep and (keep == self._max or not msg.attachments):
            return msg
        return dataclasses.replace(
            msg,
            text=msg.text[:keep],
            attachments=msg.attachments if keep == self._max else (),
            extras={**msg.extras, TEXT_CHARS: original_length(msg)},
        )

    async def __call__(self, msg: InboundMessage) -> None:
        await self._put(self.screen(msg))
