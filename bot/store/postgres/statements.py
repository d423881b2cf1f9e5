"""Marks a PostgreSQL statement carries, filled in as it runs: one round trip each.

- :data:`FENCE` stands in a write's ``WHERE``: under a replica's fence (a chat's turn,
  bot/cluster) it becomes ``(SELECT bot_fence($a, $b, $c))`` (migration 0019): the
  lease checked by the write itself, which raises SQLSTATE BF001 and rolls the whole
  statement back once the lease moved on; unfenced it is ``TRUE``. Without the mark a
  write under a fence needs a transaction around it that checks the lease first:
  BEGIN, the check, the write, COMMIT.
- :data:`DURABLE` (with FENCE) stands beside it in the inbox journal's write: the pool
  commits without waiting for the WAL flush (``synchronous_commit = off``, what
  SQLite's ``synchronous=NORMAL`` is to its other writes: the last commits may be lost
  to a crash of the server, never half of one), and this one statement's transaction
  flushes (``set_config(..., is_local)``): a channel acknowledges its platform after it.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any

import asyncpg

from bot.cluster import fence
from bot.errors import FencedOff

FENCE = "{fence}"
DURABLE = "{durable}"
FENCED_OFF = "BF001"  # the SQLSTATE bot_fence raises


def marked(sql: str) -> bool:
    return FENCE in sql


@functools.lru_cache(maxsize=256)
def rendered(sql: str, argc: int, fenced: bool) -> str:
    """``sql`` (with ``argc`` parameters of its own) with its marks filled in: the
    journal's commit level next, then the fence's three parameters when ``fenced``."""
    if DURABLE in sql:
        argc += 1
        sql = sql.replace(DURABLE, f"set_config('synchronous_commit', ${argc}, true) IS NOT NULL")
    check = f"(SELECT bot_fence(${argc + 1}, ${argc + 2}, ${argc + 3}))" if fenced else "TRUE"
    return sql.replace(FENCE, check)


def bound(sql: str, args: tuple[Any, ...], durable: str) -> tuple[str, tuple[Any, ...]]:
    """A marked statement and its arguments as run now (``durable``: the commit level
    of the journal's writes)."""
    held = fence.current()
    extra: tuple[Any, ...] = (durable,) if DURABLE in sql else ()
    if held is not None:
        extra += held.args()
    return rendered(sql, len(args), held is not None), (*args, *extra)


@functools.lru_cache(maxsize=256)
def reads(sql: str) -> bool:
    """A plain ``SELECT`` (the store's reads neither lock nor write): no fence to check."""
    return sql.lstrip()[:7].upper() == "SELECT "


@contextlib.contextmanager
def refusals() -> Iterator[None]:
    """bot_fence's refusal as :class:`FencedOff` (the statement rolled back whole)."""
    try:
        yield
    except asyncpg.PostgresError as exc:
        if exc.sqlstate == FENCED_OFF:
            raise FencedOff(str(exc)) from exc
        raise
