"""How many preview calls one Slack workspace may still make: a token bucket per method.

Slack's rate-limit tiers apply per method, per workspace, per app ("Tier 3: 50+ per
minute"), not per conversation: ten chats streaming at once share one ``chat.update``
allowance. The bucket keeps the bot under it without asking Slack (a call over budget
is refused here, before any request), and a 429 that arrives anyway empties it until
Slack's ``Retry-After`` has passed.
"""

from __future__ import annotations

import time
from collections.abc import Callable

BURST = 3  # calls a quiet workspace may make back to back


class Budget:
    def __init__(
        self, per_minute: float, *, burst: int = BURST, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._rate = per_minute / 60.0
        self._burst = float(burst)
        self._tokens = float(burst)
        self._clock = clock
        self._at = clock()

    @property
    def seconds_per_call(self) -> float:
        return 1.0 / self._rate

    def _refill(self) -> None:
        now = self._clock()
        if now > self._at:
            self._tokens = min(self._burst, self._tokens + (now - self._at) * self._rate)
            self._at = now

    def take(self) -> float:
        """Spend one call: 0.0 when allowed, else the seconds until one is."""
        self._refill()
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return 0.0
        return max((1.0 - self._tokens) / self._rate, self._at - self._clock())

    def charge(self) -> None:
        """A call that was made regardless (an answer's edit): previews leave room for it."""
        self._refill()
        self._tokens = max(-self._burst, self._tokens - 1.0)

    def pause(self, seconds: float) -> None:
        """Slack said 429: nothing more until ``seconds`` have passed."""
        self._refill()
        self._tokens = 0.0
        self._at = max(self._at, self._clock() + seconds)
