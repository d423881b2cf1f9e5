"""A set of platform ids kept in a channel's StateStore, with an in-memory cache.

What an adapter must still know after a restart (threads it joined, channels already
told something once) is small and looked up per message; the cache keeps the store off
the hot path, the store keeps the answer true across restarts. Such ids grow with use,
so each is kept ``keep_for`` (30 days) after its last use and then dropped by
housekeeping: a use re-writes it at most once a day.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from datetime import timedelta

from channels.base import StateStore

_CACHE = 4096
KEEP = timedelta(days=30)
_REFRESH_S = 24 * 3600.0


class Remembered:
    def __init__(
        self, state: StateStore | None, prefix: str, *, keep_for: timedelta = KEEP
    ) -> None:
        self._state = state
        self._prefix = prefix
        self._keep_for = keep_for
        # item -> when this process last wrote it (0.0: found in the store, not yet
        # re-written), None: not remembered
        self._known: OrderedDict[str, float | None] = OrderedDict()

    def _key(self, item: str | int) -> str:
        return f"{self._prefix}:{item}"

    async def has(self, item: str | int) -> bool:
        """Whether ``item`` is remembered; a use keeps it for another ``keep_for``."""
        item = str(item)
        if item in self._known:
            self._known.move_to_end(item)
            written = self._known[item]
        else:
            stored = self._state is not None and await self._state.get(self._key(item)) is not None
            written = 0.0 if stored else None
            self._remember(item, written)
        if written is None:
            return False
        if time.time() - written >= _REFRESH_S:
            await self._write(item)
        return True

    async def add(self, item: str | int) -> bool:
        """Remember ``item``; True if it was new."""
        item = str(item)
        if await self.has(item):
            return False
        await self._write(item)
        return True

    async def _write(self, item: str) -> None:
        self._remember(item, time.time())
        if self._state is not None:
            await self._state.set(self._key(item), "1", keep_for=self._keep_for)

    def _remember(self, item: str, written: float | None) -> None:
        self._known[item] = written
        self._known.move_to_end(item)
        while len(self._known) > _CACHE:
            self._known.popitem(last=False)
