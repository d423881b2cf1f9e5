"""Refused requests on a public route, logged at most once a minute with a count.

Anyone on the internet can post to a webhook route (Telegram's, Slack's HTTP Events), so
one WARNING per refused request would let a stranger flood the log: the first refusal is
logged, the next ones within ``every_s`` only counted, and the count said in the next line.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable


class Refusals:
    """Counts refused requests and logs one WARNING per ``every_s`` with the count.

    ``what`` names the refused request ("webhook request with a wrong secret"); the line
    goes to ``logger``, the route's own, so it reads as that channel's.
    """

    def __init__(self, logger: logging.Logger, what: str, every_s: float = 60.0) -> None:
        self.logger = logger
        self.what = what
        self.every_s = every_s
        self.clock: Callable[[], float] = time.monotonic
        self._last: float | None = None
        self._unlogged = 0

    def refused(self, remote: str | None) -> None:
        now = self.clock()
        if self._last is not None and now - self._last < self.every_s:
            self._unlogged += 1
            return
        more = f" ({self._unlogged} more since the last warning)" if self._unlogged else ""
        self.logger.warning("%s from %s refused%s", self.what, remote, more)
        self._last, self._unlogged = now, 0
