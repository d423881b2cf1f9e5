"""A set of platform ids kept in a channel's StateStore, with an in-memory cache.

What an adapter must still know after a restart (threads it joined, channels already
told something once) is small and looked up per message; the cache keeps the store off
the hot path, the store keeps the answer true across restarts.
"""

from __future__ import annotations

from collections import OrderedDict

from channels.base import StateStore

_CACHE = 4096


class Remembered:
    def __init__(self, state: StateStore | None, prefix: str) -> None:
        self._state = state
        self._prefix = prefix
        self._known: OrderedDict[str, bool] = OrderedDict()

    def _key(self, item: str | int) -> str:
        return f"{self._prefix}:{item}"

    async def has(self, item: str | int) -> bool:
        item = str(item)
        if item in self._known:
            self._known.move_to_end(item)
            return self._known[item]
        found = self._state is not None and await self._state.get(self._key(item)) is not None
        self._remember(item, found)
        return found

    async def add(self, item: str | int) -> bool:
        """Remember ``item``; True if it was new."""
        item = str(item)
        if await self.has(item):
            return False
        self._remember(item, True)
        if self._state is not None:
            await self._state.set(self._key(item), "1")
        return True

    def _remember(self, item: str, value: bool) -> None:
        self._known[item] = value
        self._known.move_to_end(item)
        while len(self._known) > _CACHE:
            self._known.popitem(last=False)
