"""Real storage with faults: a repository that delegates to a working backend and makes
chosen methods raise, as a locked or full SQLite database does.

Tests build a daemon on it (``build_daemon(..., storage=...)``) to prove that one failed
statement never stops the daemon: the work stays pending and is retried.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from bot.store.base import Storage
from bot.store.db import Database
from bot.store.sqlite import sqlite_storage


class Faulty:
    """Delegates every call to ``inner``; ``fail(method, times, when)`` makes calls raise."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._faults: dict[str, list[Any]] = {}
        self._holds: dict[str, tuple[asyncio.Event, asyncio.Event]] = {}
        self.raised: list[str] = []

    def hold(self, method: str) -> tuple[asyncio.Event, asyncio.Event]:
        """Calls of ``method`` wait (a slow disk) until the returned ``release`` is set;
        ``entered`` is set when the first call is waiting."""
        entered, release = asyncio.Event(), asyncio.Event()
        self._holds[method] = (entered, release)
        return entered, release

    def fail(
        self,
        method: str,
        times: int = 1,
        when: Callable[..., bool] = lambda *a, **kw: True,
        error: str = "database is locked",
    ) -> Faulty:
        self._faults[method] = [times, when, error]
        return self

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        fault = self._faults.get(name)
        held = self._holds.get(name)
        if (fault is None and held is None) or not callable(attr):
            return attr

        async def call(*args: Any, **kwargs: Any) -> Any:
            if held is not None:
                held[0].set()
                await held[1].wait()
            if fault is not None and fault[0] > 0 and fault[1](*args, **kwargs):
                fault[0] -= 1
                self.raised.append(name)
                raise sqlite3.OperationalError(fault[2])
            return await attr(*args, **kwargs)

        return call


def faulty_storage(**repos: Callable[[Faulty], Faulty]) -> Callable[[Database], Storage]:
    """A storage factory for ``build_daemon``: SQLite, with the named repositories faulty."""

    def build(db: Database) -> Storage:
        real = sqlite_storage(db)
        wrapped = {name: setup(Faulty(getattr(real, name))) for name, setup in repos.items()}
        return replace(real, **wrapped)

    return build
