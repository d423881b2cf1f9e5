"""Housekeeping: everything that grows with use is dropped on a schedule once unneeded.

The inbox and outbox keep finished rows only as long as dedup needs them (a platform
redelivers within minutes, a reminder re-fires within its grace period); offloaded tool
outputs only as long as a conversation may still refer to them; files users sent, files
the bot wrote for a chat (``send_file``, MCP tools), chat messages a summary already
stands for, finished reminders and the records kept for
admins (refused persona edits, failed folds) for a set number of days; who wrote a
message only until a fold has covered it or ``/new`` removed it; expired pairing codes
and holds; adapter state whose ``keep_for`` ran out (threads joined, notices given,
posts in progress). The README's "What is kept and for how long" lists every rule.
Runs once at start, then every ``retention.every_h`` hours; a
failed run is logged and retried at the next tick.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.agent.governor.offload import ToolResultOffload
from bot.config import RetentionSettings
from bot.media.files import MediaFiles
from bot.messages import utcnow
from bot.store.base import Previews, Storage
from bot.workspaces.chat_files import ChatFiles

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Pruned:
    """What one housekeeping run removed."""

    inbox: int
    outbox: int
    tool_results: int
    media: int = 0
    chat_files: int = 0
    previews: int = 0
    messages: int = 0
    reminders: int = 0
    persona_refusals: int = 0
    memory_failures: int = 0
    memory_speakers: int = 0
    memory_forgotten: int = 0
    pairing: int = 0
    channel_state: int = 0


class Housekeeping:
    def __init__(
        self,
        storage: Storage,
        offload: ToolResultOffload,
        settings: RetentionSettings,
        *,
        clock: Callable[[], datetime] = utcnow,
        media: MediaFiles | None = None,
        chat_files: ChatFiles | None = None,
        previews: Previews | None = None,
    ) -> None:
        self._media = media
        self._chat_files = chat_files
        self._previews = previews  # streamed previews' ids: kept as long as the inbox's
        self._storage = storage
        self._offload = offload
        self._settings = settings
        self._clock = clock
        self._task: asyncio.Task[None] | None = None
        self.runs = 0

    async def prune(self) -> Pruned:
        """One pass over every kind of retained data."""
        now, keep, s = self._clock(), self._settings, self._storage

        def days(n: float) -> datetime:
            return now - timedelta(days=n)

        pruned = Pruned(
            inbox=await s.inbox.prune(days(keep.inbox_days)),
            outbox=await s.outbox.prune(days(keep.outbox_days)),
            tool_results=await asyncio.to_thread(
                self._offload.remove_older_than, days(keep.tool_results_days)
            ),
            media=0
            if self._media is None
            else await asyncio.to_thread(self._media.remove_older_than, days(keep.media_days)),
            chat_files=0
            if self._chat_files is None
            else await asyncio.to_thread(
                self._chat_files.remove_older_than, days(keep.chat_files_days)
            ),
            previews=0
            if self._previews is None
            else await self._previews.prune(days(keep.inbox_days)),
            messages=await s.sessions.prune_summarized(days(keep.history_days)),
            reminders=await s.reminders.prune(days(keep.reminders_days)),
            persona_refusals=await s.workspaces.prune_refusals(days(keep.records_days)),
            memory_failures=await s.memory.prune_failures(days(keep.records_days)),
            memory_speakers=await s.memory.prune_speakers(),
            memory_forgotten=await s.memory.prune_forgotten(days(keep.records_days)),
            pairing=await s.access.prune_pairing(now),
            channel_state=await s.kv.prune(now),
        )
        self.runs += 1
        removed = {k: v for k, v in dataclasses.asdict(pruned).items() if v}
        if removed:
            log.info("housekeeping removed %s", ", ".join(f"{n} {k}" for k, n in removed.items()))
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
