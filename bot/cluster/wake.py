"""LISTEN/NOTIFY between replicas: a wake-up hint, never a carrier of work.

A replica that journals a message for a chat another replica runs sends
``NOTIFY <channel>, '<partition>'``; the replica holding that partition reads its
pending rows at once instead of at its next ``poll_s``. Nothing depends on it: a
notification is delivered only to sessions listening at commit time and is never
stored, so one lost (listener reconnecting, server restarted) only means the owner
finds the message on its next poll. The channel is named after the schema the tables
live in, so bots sharing a server in different schemas never wake each other.

Notifications go out on the listening connection itself (one connection per replica
for both), batched: partitions announced while a NOTIFY is in flight go in the next.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncpg

log = logging.getLogger(__name__)

PREFIX = "bot_inbox"


class Wakeups:
    """One replica's LISTEN connection: ``heard(partition)`` for each notification,
    :meth:`announce` to wake the holder of a partition."""

    def __init__(self, url: str, heard: Callable[[int], None], *, timeout_s: float) -> None:
        self._url = url
        self._heard = heard
        self._timeout_s = timeout_s
        self._conn: asyncpg.Connection | None = None
        self._channel = PREFIX
        self._due: set[int] = set()
        self._sender: asyncio.Task[None] | None = None
        self._keeper: asyncio.Task[None] | None = None

    @property
    def listening(self) -> bool:
        return self._conn is not None and not self._conn.is_closed()

    def start(self, every_s: float) -> None:
        """Listen from now on, in a task of its own (never in the lease renewal's way:
        a connect to a server under strain may take long, even to cancel)."""
        self._keeper = asyncio.create_task(self._keep(every_s), name="cluster-listen")

    async def _keep(self, every_s: float) -> None:
        while True:
            await self.ensure()
            await asyncio.sleep(every_s)

    async def ensure(self) -> None:
        """Listen, connecting anew if the connection is gone; a failure is only logged
        (the poll covers for it) and retried on the next call."""
        if self.listening:
            return
        import asyncpg

        try:
            conn = await asyncpg.connect(self._url, timeout=self._timeout_s)
            schema = await conn.fetchval("SELECT current_schema()")
            self._channel = f"{PREFIX}_{schema}"[:63]
            await conn.add_listener(self._channel, self._on_notify)
        except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            log.info("cluster: not listening for wake-ups (%s); polling only", exc)
            return
        self._conn = conn

    def _on_notify(self, _conn: Any, _pid: int, _channel: str, payload: str) -> None:
        with contextlib.suppress(ValueError):
            self._heard(int(payload))

    def announce(self, partition: int) -> None:
        """Wake the holder of ``partition`` soon (never waits; best effort)."""
        if not self.listening:
            return
        self._due.add(partition)
        if self._sender is None or self._sender.done():
            self._sender = asyncio.create_task(self._send(), name="cluster-notify")

    async def _send(self) -> None:
        while self._due and self._conn is not None:
            due, self._due = sorted(self._due), set()
            try:
                await self._conn.execute(
                    "SELECT pg_notify($1, p::text) FROM unnest($2::int[]) AS p", self._channel, due
                )
            except Exception as exc:  # a hint: the owner's poll finds the message anyway
                log.info("cluster: wake-up not sent (%s)", exc)
                return

    async def close(self) -> None:
        tasks = [t for t in (self._keeper, self._sender) if t is not None]
        for task in tasks:
            task.cancel()
        if tasks:  # a connect being cancelled may linger: never hold a stop up for it
            await asyncio.wait(tasks, timeout=1.0)
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.terminate()
