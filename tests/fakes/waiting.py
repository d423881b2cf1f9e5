"""Await a condition with a timeout: tests wait for state, never sleep and hope."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any


async def until(condition: Callable[[], Any], timeout: float = 5.0) -> None:
    """Return as soon as ``condition()`` is truthy; TimeoutError after ``timeout`` s."""

    async def poll() -> None:
        while not condition():  # noqa: ASYNC110 (polls plain state, no event to await)
            await asyncio.sleep(0.005)

    await asyncio.wait_for(poll(), timeout)
