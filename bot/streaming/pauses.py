"""Per-chat pauses after a rate limit on a preview call.

Only the chat that was told to wait waits, and only its previews: another chat's
previews and every final answer (the outbox) go on. Nothing sleeps here: a paused
chat's next preview is simply scheduled after the pause.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from bot.messages import ChatKey

MAX_ENTRIES = 10_000  # chats remembered at once; the oldest pause ends first anyway


class ChatPauses:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._until: dict[ChatKey, float] = {}

    def pause(self, key: ChatKey, seconds: float) -> None:
        now = self._clock()
        if len(self._until) >= MAX_ENTRIES:
            self._until = {k: t for k, t in self._until.items() if t > now}
        self._until[key] = max(self._until.get(key, 0.0), now + seconds)

    def until(self, key: ChatKey) -> float:
        """The monotonic time previews in ``key`` may resume (0.0: not paused)."""
        return self._until.get(key, 0.0)
