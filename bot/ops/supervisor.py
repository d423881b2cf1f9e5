"""Supervision of the daemon's long-lived tasks: one that dies is restarted, and reported.

The dispatcher's loop, the delivery router and the like run for the daemon's whole life;
an exception escaping one used to end it for good while ``/healthz`` stayed green. Here
each runs under a keeper that logs the death, counts it (``bot_task_restarts_total``),
and restarts it after a backoff that doubles while it keeps dying and resets once it has
run ``stable_s``. Until it runs again the part is reported dead, so ``/healthz`` is 503
naming it. Returning counts as dying: these tasks only end by being cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from bot.ops.metrics import NO_METRICS, Metrics

log = logging.getLogger(__name__)

OK = "ok"
TaskFactory = Callable[[], Coroutine[Any, Any, None]]


@dataclass
class _Part:
    name: str
    factory: TaskFactory
    state: str = OK
    restarts: int = 0
    task: asyncio.Task[None] | None = None


class Supervisor:
    def __init__(
        self,
        metrics: Metrics = NO_METRICS,
        *,
        backoff_s: float = 0.1,
        max_backoff_s: float = 30.0,
        stable_s: float = 60.0,
    ) -> None:
        self._metrics = metrics
        self._backoff_s = backoff_s
        self._max_backoff_s = max_backoff_s
        self._stable_s = stable_s
        self._parts: dict[str, _Part] = {}

    def spawn(self, name: str, factory: TaskFactory) -> None:
        """Run ``factory()`` now and again whenever it dies, until :meth:`stop`."""
        part = _Part(name, factory)
        part.task = asyncio.create_task(self._keep(part), name=name)
        self._parts[name] = part

    def states(self) -> dict[str, str]:
        """Each part's state: ``ok``, or why it is dead and when it restarts."""
        return {name: part.state for name, part in self._parts.items()}

    def restarts(self, name: str) -> int:
        return self._parts[name].restarts

    async def stop(self) -> None:
        """Cancel every part and wait for each to end."""
        parts, self._parts = list(self._parts.values()), {}
        for part in parts:
            if part.task is not None:
                part.task.cancel()
        for part in parts:
            if part.task is not None:
                with contextlib.suppress(asyncio.CancelledError):
                    await part.task

    async def _keep(self, part: _Part) -> None:
        loop = asyncio.get_running_loop()
        delay = self._backoff_s
        while True:
            started = loop.time()
            part.state = OK
            try:
                await part.factory()
                error = "it returned"
                log.error("task %s ended unexpectedly; restarting it", part.name)
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
                log.exception("task %s died; restarting it", part.name)
            if loop.time() - started >= self._stable_s:
                delay = self._backoff_s  # it had been running fine: a fresh failure
            part.restarts += 1
            self._metrics.task_restarted(part.name)
            part.state = f"dead ({error}); restart {part.restarts} in {delay:.1f} s"
            await asyncio.sleep(delay)
            delay = min(delay * 2, self._max_backoff_s)
