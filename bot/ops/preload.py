"""Imports started on a thread at the very beginning of ``bot run``.

Most of an import is bytecode under the GIL, which a thread cannot speed up; but
importing aiohttp builds its two default SSL contexts, reading the system CA bundle
(tens of milliseconds) with the GIL released. On a thread that overlaps the main
thread reading the settings instead of adding to the time to ``ready:``. Python's
per-module import locks make the main thread's own ``import aiohttp`` wait for this one,
never run it twice. Only what ``bot run`` certainly needs belongs here.
"""

from __future__ import annotations

import importlib
import logging
import sys
import threading

log = logging.getLogger(__name__)

RUN_MODULES = ("aiohttp", "aiohttp.web")


def skip_http_cli() -> None:
    """httpx (imported by litellm and a chat SDK) imports its command-line client
    when click and rich are installed (litellm and typer bring them): tens of ms for a
    ``main`` this process never calls. Marking the module absent makes httpx fall back to
    its stub, as it does when the CLI extras are not installed."""
    if "httpx" not in sys.modules and "httpx._main" not in sys.modules:
        sys.modules["httpx._main"] = None  # type: ignore[assignment]  # the import system's "absent"


def preload(modules: tuple[str, ...] = RUN_MODULES) -> threading.Thread:
    """Import ``modules`` on a daemon thread; a failure is left to the main thread's own
    import of the same module, which raises it where it is handled."""
    skip_http_cli()

    def work() -> None:
        for name in modules:
            try:
                importlib.import_module(name)
            except Exception:
                log.debug("preload of %s failed", name, exc_info=True)

    thread = threading.Thread(target=work, name="preload", daemon=True)
    thread.start()
    return thread
