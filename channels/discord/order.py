"""Arrival order per conversation: discord.py runs each gateway event as a task of its
own, so two messages of one chat could otherwise be journaled out of order. Only
messages of the same conversation wait for each other; different chats journal side
by side, so their inbox writes share the journal's fsynced commits (one lock for all
chats made every message wait for the previous one's fsync)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator


class PerConversation:
    def __init__(self) -> None:
        self._locks: dict[int, tuple[asyncio.Lock, int]] = {}  # id -> (lock, holders)

    @contextlib.asynccontextmanager
    async def turn(self, conversation: int) -> AsyncIterator[None]:
        """Held by one message of ``conversation`` at a time, in the order they asked."""
        lock, holders = self._locks.get(conversation) or (asyncio.Lock(), 0)
        self._locks[conversation] = (lock, holders + 1)
        try:
            async with lock:
                yield
        finally:
            lock, holders = self._locks[conversation]
            if holders == 1:
                del self._locks[conversation]  # nobody waits: kept only while in use
            else:
                self._locks[conversation] = (lock, holders - 1)

    def __len__(self) -> int:
        return len(self._locks)
