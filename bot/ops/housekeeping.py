"""Housekeeping: finished journal rows, old offloaded tool results and old files users
sent (data/media/) are dropped on a schedule.

The inbox and outbox keep finished rows only as long as dedup needs them (a platform
redelivers within minutes, a reminder re-fires within its grace period); offloaded tool
outputs only as long as a conversation may still refer to them. Without this the
database and the workspaces grow forever. Runs once at start, then every
``retention.every_h`` hours; a failed run is logged and retried at the next tick.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.agent.governor.offload import ToolResultOffload
from bot.config import RetentionSettings
from bot.media.files import MediaFiles
from bot.messages import utcnow
from bot.store.base import Inbox, Outbox, Previews

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Pruned:
    """What one housekeeping run removed."""

    inbox: int
    outbox: int
    tool_results: int
    media: int = 0
    previews: int = 0


class Housekeeping:
    def __init__(
        self,
        inbox: Inbox,
        outbox: Outbox,
        offload: ToolResultOffload,
        settings: RetentionSettings,
        *,
        clock: Callable[[], datetime] = utcnow,
        media: MediaFiles | None = None,
        previews: Previews | None = None,
    ) -> None:
        self._media = media
        self._previews = previews  # streamed previews' ids: kept as long as the inbox's
        self._inbox = inbox
        self._outbox = outbox
        self._offload = offload
        self._settings = settings
        self._clock = clock
        self._task: asyncio.Task[None] | None = None
        self.runs = 0

    async def prune(self) -> Pruned:
        """One pass over every kind of retained data."""
        now, keep = self._clock(), self._settings
        pruned = Pruned(
            inbox=await self._inbox.prune(now - timedelta(days=keep.inbox_days)),
            outbox=await self._outbox.prune(now - timedelta(days=keep.outbox_days)),
            tool_results=await asyncio.to_thread(
                self._offload.remove_older_than, now - timedelta(days=keep.tool_results_days)
            ),
            media=0
            if self._media is None
            else await asyncio.to_thread(
                self._media.remove_older_than, now - timedelta(days=keep.media_days)
            ),
            previews=await self._previews.prune(now - timedelta(days=keep.inbox_days))
            if self._previews is not None
            else 0,
        )
        self.runs += 1
        if pruned.inbox or pruned.outbox or pruned.tool_results or pruned.media:
            log.info(
                "housekeeping removed %d inbox rows, %d outbox rows, %d tool-result files, "
                "%d media files",
                pruned.inbox,
                pruned.outbox,
                pruned.tool_results,
                pruned.media,
            )
        return pruned

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name="housekeeping")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    @property
    def alive(self) -> bool:
        return self._task is not None and not self._task.done()

    async def _loop(self) -> None:
        while True:
            try:
                await self.prune()
            except Exception as exc:  # any failure: logged, retried at the next tick
                log.warning(
                    "housekeeping failed (retried in %g h): %s", self._settings.every_h, exc
                )
            await asyncio.sleep(self._settings.every_h * 3600)
