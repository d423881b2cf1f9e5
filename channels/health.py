"""How a channel knows it works: the outcome of its recurring exchanges with the platform.

A started channel is not a working one: a Telegram poll answered 409 (another process
polls the same token), 401 (a revoked token) or nothing at all (the network) twenty times
in a row used to leave ``/healthz`` green. :class:`LinkHealth` counts consecutive
failures of one recurring exchange (a poll, a webhook check, a gateway connection): after
``degrade_after`` of them, or with no success for ``stale_after_s``, the channel is
degraded, and it says why in ONE log line (each failure itself is only a debug line),
then one line when it recovers.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime

from channels.base import ChannelHealth

log = logging.getLogger(__name__)


class LinkHealth:
    """The state of one recurring exchange of one channel (``what``: "getUpdates")."""

    def __init__(
        self,
        channel: str,
        what: str,
        *,
        degrade_after: int = 3,
        stale_after_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.channel = channel
        self.what = what
        self.degrade_after = max(1, degrade_after)
        self.stale_after_s = stale_after_s
        self._clock = clock
        self._last_ok: float | None = None
        self._failures = 0
        self._failing_since: datetime | None = None
        self._reason = ""
        self._level = logging.WARNING
        self._reported = False  # the degraded line was logged for this streak

    @property
    def failures(self) -> int:
        """Failures in a row since the last success."""
        return self._failures

    def succeeded(self) -> None:
        if self._reported:
            log.info(
                "%s recovered: %s works again after %d failures in a row",
                self.channel,
                self.what,
                self._failures,
            )
        self._last_ok = self._clock()
        self._failures, self._failing_since, self._reason = 0, None, ""
        self._reported, self._level = False, logging.WARNING

    def failed(self, reason: str, level: int = logging.WARNING) -> None:
        """One more failure; the streak is logged once, when it makes the channel degraded."""
        self._failures += 1
        self._failing_since = self._failing_since or datetime.now(UTC)
        self._reason = reason
        self._level = max(self._level, level)
        log.debug("%s: %s failed (%d in a row): %s", self.channel, self.what, self._failures,
                  reason)  # fmt: skip
        if not self._reported and self._failures >= self.degrade_after:
            self._reported = True
            log.log(
                self._level,
                "%s degraded: %s; reported by /healthz until it works again",
                self.channel,
                self._failing(),
            )

    def _failing(self) -> str:
        since = self._failing_since.strftime("%H:%M:%S UTC") if self._failing_since else "?"
        return f"{self.what} failing since {since} ({self._failures} in a row): {self._reason}"

    def report(self) -> ChannelHealth:
        if self._failures >= self.degrade_after:
            return ChannelHealth(False, self._failing())
        if self.stale_after_s is not None and self._last_ok is not None:
            quiet = self._clock() - self._last_ok
            if quiet > self.stale_after_s:
                return ChannelHealth(False, f"no successful {self.what} for {quiet:.0f} s")
        return ChannelHealth(True)
