"""The event loop ``bot run`` runs on: uvloop where it is installed, else asyncio's own.

Why: everything a turn does between two awaits is short (a socket read, a JSON parse, a
database hand-back), so the loop's own bookkeeping (handles, the selector, transports,
futures) is a large part of what a fast turn costs. uvloop (MagicStack's libuv loop, a
drop-in ``asyncio.AbstractEventLoop``) does that bookkeeping in C; on the bench machine
it takes about a tenth off the CPU of a turn through a platform adapter (``make bench``,
"turns" rows). It installs as a wheel on CPython for Linux and macOS; elsewhere, or with
``event_loop = "asyncio"``, the daemon runs on the standard loop and behaves the same.

``event_loop`` in the config:

- ``"auto"`` (the default): uvloop when it can be imported, else asyncio;
- ``"uvloop"``: uvloop, or a config error naming what is missing;
- ``"asyncio"``: the standard library's loop (to rule the loop out when debugging).
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable, Coroutine
from typing import Any, Literal, TypeVar

from bot.errors import ConfigError

EventLoopChoice = Literal["auto", "uvloop", "asyncio"]
LoopFactory = Callable[[], asyncio.AbstractEventLoop]
T = TypeVar("T")


def loop_factory(choice: EventLoopChoice) -> LoopFactory | None:
    """What makes the loop for ``choice``; None for asyncio's default."""
    if choice == "asyncio":
        return None
    try:
        uvloop = importlib.import_module("uvloop")
    except ImportError as exc:
        if choice == "uvloop":
            raise ConfigError(
                'event_loop = "uvloop" but uvloop cannot be imported'
                f" ({exc}); install it (CPython on Linux or macOS) or use"
                ' event_loop = "auto"'
            ) from exc
        return None
    factory: LoopFactory = uvloop.new_event_loop
    return factory


def run_on(choice: EventLoopChoice, coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` on the loop ``choice`` names."""
    with asyncio.Runner(loop_factory=loop_factory(choice)) as runner:
        return runner.run(coro)


def loop_name(loop: asyncio.AbstractEventLoop) -> str:
    """``uvloop`` or ``asyncio``: what the ready line reports."""
    return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"
