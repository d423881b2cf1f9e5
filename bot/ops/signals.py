"""SIGTERM and SIGINT (``docker stop``, ``systemctl stop``, Ctrl-C) ask for a graceful stop."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable


def stop_on_signals(
    request_stop: Callable[[str], None], interrupt: Callable[[], bool] | None = None
) -> None:
    """SIGTERM and SIGINT ask for a graceful stop (where the loop supports handlers).
    ``interrupt``: asked first on SIGINT, which it takes (True) for something smaller
    than a stop (the terminal chat: Ctrl-C while an answer is awaited stops the answer)."""
    loop = asyncio.get_running_loop()

    def on_sigint() -> None:
        if interrupt is None or not interrupt():
            request_stop(signal.SIGINT.name)

    # A loop without signal handlers (Windows' proactor) raises NotImplementedError:
    # there Ctrl-C arrives as KeyboardInterrupt, which ``bot`` turns into exit code 0.
    with contextlib.suppress(NotImplementedError):
        loop.add_signal_handler(signal.SIGTERM, request_stop, signal.SIGTERM.name)
        loop.add_signal_handler(signal.SIGINT, on_sigint)
