"""Await a condition with a timeout: tests wait for state, never sleep and hope."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

# How long tests wait, in one place. Each is a bound on a condition, never a sleep: a
# passing run never waits it out, so it is sized for the worst machine the suite must pass
# on (2 cores, `pytest -n auto`, other jobs beside it: everything several times slower than
# on an idle machine), and only decides how long a real failure takes to show.
STEP_S = 30.0  # one step in-process: a fake's answer, a turn on the fake model, a lease
PROCESS_S = 90.0  # a `bot run` subprocess: its start, the litellm import, its first turn
PROCESS_TEST_S = 300  # the pytest-timeout of a test that runs `bot run` processes


async def until(condition: Callable[[], Any], timeout: float = STEP_S) -> None:
    """Return as soon as ``condition()`` is truthy; TimeoutError after ``timeout`` s."""

    async def poll() -> None:
        while not condition():  # noqa: ASYNC110 (polls plain state, no event to await)
            await asyncio.sleep(0.005)

    await asyncio.wait_for(poll(), timeout)


async def inbox_done(daemon: Any, message_id: str, timeout: float = STEP_S) -> None:
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


async def outbox_settled(path: Path, timeout: float = STEP_S) -> list[str]:
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
