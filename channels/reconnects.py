"""A client library's per-reconnect log lines folded into one channel's LinkHealth.

discord.py and slack_sdk reconnect on their own, and each attempt logs an ERROR (discord.py
with a ~54-line traceback), so a one-minute outage wrote hundreds of lines. A
:class:`Reconnects` filter on the library's logger turns each such record into a
``LinkHealth`` failure (the channel logs ONE degraded line with the first reason, then
one recovered line) and demotes the record to DEBUG, where ``--log-level DEBUG`` still
shows it. A logging filter is the one seam both libraries offer without patching them.

Only records logged by the tasks :meth:`Reconnects.task` started (and the tasks those
start: asyncio copies the context) or inside :meth:`Reconnects.owning` are taken, so two
channels in one process (tests, replicas) each see only their own client's lines.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import Coroutine, Iterator, Sequence
from typing import Any

from channels.health import LinkHealth

_owner: contextvars.ContextVar[Reconnects | None] = contextvars.ContextVar(
    "reconnects_owner", default=None
)


class Reconnects(logging.Filter):
    """Takes ``loggers``' records that start with one of ``failed`` (a failed attempt:
    ``link.failed``), ``up`` (connected again: ``link.succeeded``) or ``noise`` (said per
    attempt); all three are demoted to DEBUG, the rest pass as they are."""

    def __init__(
        self,
        loggers: Sequence[str],
        link: LinkHealth,
        *,
        failed: Sequence[str],
        up: Sequence[str] = (),
        noise: Sequence[str] = (),
    ) -> None:
        super().__init__()
        self.loggers = [logging.getLogger(name) for name in loggers]
        self.link = link
        self._failed, self._up, self._noise = tuple(failed), tuple(up), tuple(noise)

    def task(self, coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        """Run ``coro`` as a task whose library records (and those of the tasks it starts)
        this filter takes, from now until :meth:`detach`."""
        context = contextvars.copy_context()
        context.run(_owner.set, self)
        self._attach()
        return asyncio.create_task(coro, name=name, context=context)

    @contextlib.contextmanager
    def owning(self) -> Iterator[None]:
        """The library's records logged in this block (a call awaited in place) are taken."""
        self._attach()
        token = _owner.set(self)
        try:
            yield
        finally:
            _owner.reset(token)

    def detach(self) -> None:
        """The channel stopped: the library's logger is left as it was."""
        for logger in self.loggers:
            logger.removeFilter(self)

    def _attach(self) -> None:
        for logger in self.loggers:
            logger.addFilter(self)  # a no-op when already attached

    def filter(self, record: logging.LogRecord) -> bool:
        if _owner.get() is not self or not isinstance(record.msg, str):
            return True
        text = record.msg
        if text.startswith(self._failed):
            self.link.failed(_reason(record))
        elif text.startswith(self._up):
            self.link.succeeded()
        elif not text.startswith(self._noise):
            return True
        record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


def _reason(record: logging.LogRecord) -> str:
    """The exception a record carries (``Type: message``), else its message."""
    exc = record.exc_info[1] if record.exc_info else None
    if exc is None:
        return record.getMessage()
    return f"{type(exc).__name__}: {exc}" if str(exc) else repr(exc)
