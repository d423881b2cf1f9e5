"""Catching up after a gap: per conversation, the last message the channel saw.

The StateStore has no listing, so the conversations a channel takes part in are one
JSON value (``{conversation: [last message id, its time]}``), the most recently active
:data:`KEPT` of them. It is written a moment after it changes (a message costs no write
of its own) and at stop; a crash can lose that moment, and then the next catch-up reads
a little more than it must: the inbox drops what it journaled already.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable

from channels.base import CatchUpWindow, StateStore

log = logging.getLogger(__name__)

KEPT = 200  # conversations remembered (the catch-up reads at most the window's share)
FLUSH_S = 1.0  # a change is written this long after it happened

ReadAfter = Callable[[str, str, float], Awaitable[None]]
"""Read one conversation after (message id, time floor in epoch seconds), in order."""


class Cursors:
    def __init__(self, state: StateStore | None, key: str, *, flush_s: float = FLUSH_S) -> None:
        self._state = state
        self._key = key
        self._flush_s = flush_s
        self._seen: dict[str, tuple[str, float]] = {}
        self._flush: asyncio.Task[None] | None = None

    async def load(self) -> None:
        raw = await self._state.get(self._key) if self._state is not None else None
        try:
            data = json.loads(raw) if raw else {}
            self._seen = {str(k): (str(v[0]), float(v[1])) for k, v in data.items()}
        except (ValueError, TypeError, IndexError, AttributeError):
            log.warning("%s: unreadable; catching up from now on", self._key)
            self._seen = {}

    def saw(self, conversation: str, message_id: str, at: float) -> None:
        """``message_id`` (said at ``at``) was seen in ``conversation``."""
        known = self._seen.get(conversation)
        if known is not None and known[1] > at:
            return  # an older message read late: the cursor stays where it is
        self._seen[conversation] = (message_id, at)
        if self._flush is None or self._flush.done():
            delay = self._flush_s if known is not None else 0.0  # a new one: at once
            self._flush = asyncio.get_running_loop().create_task(self._write_after(delay))

    def recent(self, most: int) -> list[tuple[str, str]]:
        """(conversation, last id seen) of the ``most`` last active, most recent first.
        One quiet for longer than the window may still have news: it is read too."""
        active = sorted(self._seen.items(), key=lambda item: item[1][1], reverse=True)
        return [(c, v[0]) for c, v in active[:most]]

    async def _write_after(self, delay: float) -> None:
        await asyncio.sleep(delay)
        await self.flush()

    async def flush(self) -> None:
        if self._state is None:
            return
        kept = sorted(self._seen.items(), key=lambda item: item[1][1], reverse=True)[:KEPT]
        self._seen = dict(kept)
        await self._state.set(self._key, json.dumps({c: list(v) for c, v in kept}))

    async def close(self) -> None:
        """Write what is pending (at stop)."""
        if self._flush is not None and not self._flush.done():
            self._flush.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._flush
            await self.flush()


async def catch_up(cursors: Cursors, window: CatchUpWindow, read: ReadAfter, name: str) -> None:
    """Each recent conversation read after its cursor; one that fails is logged and
    skipped (the others still get their answers)."""
    floor = time.time() - window.max_age.total_seconds()
    conversations = cursors.recent(window.max_conversations)
    for conversation, last in conversations:
        try:
            await read(conversation, last, floor)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the platform refused or is unreachable: move on
            log.warning("%s: could not catch up in %s (%r)", name, conversation, exc)
    if conversations:
        log.info("%s: caught up in %d conversations", name, len(conversations))
