"""Fencing: the lease a piece of work runs under, checked by the write that commits it.

A chat's turn runs with the fence of the chat partition's lease (a context variable, so
every await and every task started inside the turn carries it). A store backend that
many replicas share reads :func:`current` in each write (session append, outbox add,
inbox done) and runs :data:`CHECK_SQL` in the same transaction: no row means another
replica took the lease (this one was frozen or cut off past the TTL), and the write
raises :class:`~bot.errors.FencedOff` instead of committing. ``FOR SHARE`` holds the
lease row until the commit, so a take-over (an UPDATE of that row) waits for the write
rather than slipping in between the check and the commit. With no fence set (SQLite,
one process) nothing is checked and nothing costs anything.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from bot.errors import FencedOff

# The server's clock, in milliseconds: leases never trust a replica's clock.
NOW_MS = "(extract(epoch from clock_timestamp()) * 1000)::bigint"

CHECK_SQL = (
    "SELECT 1 FROM cluster_leases WHERE name = $1 AND owner = $2 AND token = $3"
    f" AND expires_ms > {NOW_MS} FOR SHARE"
)


@dataclass(frozen=True, slots=True)
class Fence:
    """One lease as held: its name, the replica holding it and the token it got. The
    token grows with every acquisition, so an older holder's token is never current."""

    lease: str
    owner: str
    token: int

    def args(self) -> tuple[str, str, int]:
        """:data:`CHECK_SQL`'s parameters."""
        return (self.lease, self.owner, self.token)


_current: ContextVar[Fence | None] = ContextVar("bot_cluster_fence", default=None)


def current() -> Fence | None:
    """The fence of the work running now (None: unfenced, the single-process path)."""
    return _current.get()


@contextlib.contextmanager
def fenced(fence: Fence | None) -> Iterator[None]:
    """Run the body (and the tasks it starts) under ``fence``."""
    reset = _current.set(fence)
    try:
        yield
    finally:
        _current.reset(reset)


async def check(conn: Any) -> None:
    """Inside a write's transaction on a shared store (``conn``: an asyncpg connection):
    refuse the write when the running work's lease is no longer this replica's."""
    fence = _current.get()
    if fence is not None and await conn.fetchval(CHECK_SQL, *fence.args()) is None:
        raise FencedOff(f"{fence.lease} moved on from token {fence.token}: write refused")
