"""Await a condition with a timeout: tests wait for state, never sleep and hope."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any


async def until(condition: Callable[[], Any], timeout: float = 5.0) -> None:
    """Return as soon as ``condition()`` is truthy; TimeoutError after ``timeout`` s."""

    async def poll() -> None:
        while not condition():  # noqa: ASYNC110 (polls plain state, no event to await)
            await asyncio.sleep(0.005)

    await asyncio.wait_for(poll(), timeout)


async def inbox_done(daemon: Any, message_id: str, timeout: float = 5.0) -> None:
    """Return once the daemon has finished with ``message_id`` (answered or refused)."""

    async def poll() -> None:
        while True:
            row = await daemon.db.fetchone(
                "SELECT status FROM inbox WHERE message_id = ?", (message_id,)
            )
            if row is not None and row[0] == "done":
                return
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), timeout)


async def outbox_settled(path: Path, timeout: float = 5.0) -> list[str]:
    """The outbox's statuses once none is pending or being sent, read on a database
    connection of the test's own (so a test counting the daemon's trips counts none)."""
    from bot.store.db import Database

    db = Database(path)
    await db.open()

    async def poll() -> list[str]:
        while True:
            statuses = [str(r[0]) for r in await db.fetchall("SELECT status FROM outbox")]
            if statuses and not {"pending", "sending"} & set(statuses):
                return statuses
            await asyncio.sleep(0.005)

    try:
        return await asyncio.wait_for(poll(), timeout)
    finally:
        await db.close()
