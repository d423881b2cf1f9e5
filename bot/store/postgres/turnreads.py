"""A turn's reads, made by the statement that counts its start: one round trip, not four.

Besides its history (kept under the chat's fence by :mod:`.sessions`), a turn reads three
things that another replica may write, so that no cache under the chat's fence holds
them: whether an earlier run of the same turn left a streamed preview (bot/streaming),
the user's time zone (set from any chat) and the remembered facts of the user and the
chat (a turn in another chat adds a user's). The dispatcher counts a turn's start
(:meth:`PgInbox.started`) right before running it, so that statement reads them too,
and the turn's readers (:class:`PgPreviews`, :class:`PgUserSettings`, :class:`PgMemory`)
take them from here. They are read a few milliseconds before the turn would read them,
before it has written anything: the same as another replica's write landing those
milliseconds later, which it may anyway.

What was read is kept in a context variable for the task that counted the start (the
turn's own: not a task it starts, such as the memory fold that outlives it), under the
same fence, until the turn's done mark; a write of the same thing through this store,
the turn's tools' included, drops it. The facts are read
in the workspace the chat last read its facts in (a hint kept per chat); a chat's first
turn, or one in another workspace, reads them itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Hashable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from bot.cluster import fence
from bot.cluster.fence import Fence
from bot.lru import LRU

CACHED_CHATS = 10_000  # workspace hints (README, "What is kept and for how long")


@dataclass(frozen=True, slots=True)
class _Read:
    """What one turn's start read: ``values`` by what (a key naming the reader and its
    arguments), under ``fence``, for the store ``owner`` and the turn's ``task``."""

    owner: TurnReads
    fence: Fence | None
    task: asyncio.Task[Any] | None
    values: dict[Hashable, Any]


_current: ContextVar[_Read | None] = ContextVar("bot_pg_turn_reads", default=None)


class TurnReads:
    """One PostgreSQL store's read-ahead: shared by its repositories."""

    def __init__(self) -> None:
        self._workspaces: LRU[str, str] = LRU(CACHED_CHATS)

    def workspace(self, chat: str) -> str | None:
        """The workspace chat ``chat`` (a facts owner) last read its facts in."""
        return self._workspaces.get(chat)

    def facts_read(self, chat: str, workspace: str) -> None:
        self._workspaces[chat] = workspace

    def keep(self, values: dict[Hashable, Any]) -> None:
        """What a turn's start read, for the rest of the turn (this task's context)."""
        _current.set(_Read(self, fence.current(), asyncio.current_task(), values))

    def end(self) -> None:
        """The turn is over: nothing read ahead stands any more."""
        read = _current.get()
        if read is not None and read.owner is self:
            _current.set(None)

    def get(self, what: Hashable) -> tuple[bool, Any]:
        """(True, the value) when this turn's start read ``what``; else (False, None)."""
        read = _current.get()
        if read is None or read.owner is not self or what not in read.values:
            return False, None
        if read.fence != fence.current() or read.task is not asyncio.current_task():
            return False, None
        return True, read.values[what]

    def drop(self, kind: str) -> None:
        """A write through this store: what was read ahead of ``kind`` no longer stands
        (keys are tuples led by their kind)."""
        read = _current.get()
        if read is not None:
            for what in [w for w in read.values if isinstance(w, tuple) and w[0] == kind]:
                del read.values[what]
