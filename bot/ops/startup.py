"""What ``bot run`` does so that it reaches ``ready:`` sooner; all of it is about imports.

- **Preload**: most of an import is bytecode under the GIL, which a thread cannot
  speed up; but importing aiohttp builds its two default SSL contexts, reading the
  system CA bundle (tens of milliseconds) with the GIL released. Started on a thread at
  the very beginning, that overlaps the main thread reading the settings. Python's
  per-module import locks make the main thread's own ``import aiohttp`` wait for this
  one, never run it twice. Only what ``bot run`` certainly needs belongs here.
- **No collector while starting**: start-up allocates long-lived objects (modules,
  classes, schemas) and next to no garbage, yet the cyclic collector keeps scanning
  them (about a tenth of the import time). It is off until ``ready:``, then on again
  after one full pass (tens of ms, once): that files everything start-up built as old,
  as the collector would have, instead of leaving it all young. Left young (or frozen
  with ``gc.freeze``), the collector's generation counts are off for the seconds of
  litellm's import that follow, and the first turn was measured 150 ms slower.
"""

from __future__ import annotations

import gc
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


def pause_collector() -> None:
    """Off until :func:`after_ready` (see the module docstring)."""
    gc.disable()


def after_ready() -> None:
    """The collector back on (if it was paused), after one full pass."""
    if not gc.isenabled():
        gc.enable()
        gc.collect()
