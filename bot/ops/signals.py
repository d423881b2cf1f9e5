"""SIGTERM and SIGINT (``docker stop``, ``systemctl stop``, Ctrl-C) ask for a graceful stop."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable


def stop_on_signals(request_stop: Callable[[str], None]) -> None:
    """SIGTERM and SIGINT ask for a graceful stop (where the loop supports handlers)."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, request_stop, sig.name)
