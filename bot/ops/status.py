"""``GET /status``: what the running daemon knows of itself, as JSON, for ``bot status``.

``/healthz`` says whether it works (and is what supervisors poll); this says what it is
doing: the same verdict and parts, plus the model, the process, how long it has been
ready, and its queues. No chat content and no reminder text: the ``[web]`` app may be
reachable by a container runtime or Prometheus. ``bot status`` reads reminders and the
replicas' leases from the store itself (:mod:`bot.cli.status`).
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.daemon import Daemon


def _prefixed(parts: dict[str, object], prefix: str) -> dict[str, object]:
    """The parts named ``prefix<name>``, by name, taken out of ``parts``."""
    found = {k.removeprefix(prefix): parts.pop(k) for k in list(parts) if k.startswith(prefix)}
    return dict(sorted(found.items()))


async def live_status(daemon: Daemon) -> dict[str, object]:
    """The health verdict, grouped (channels, tasks, MCP servers), and the process's
    model, pid, uptime since ``ready:`` and queue depths."""
    body = (await daemon.health()).body()
    channels = _prefixed(body, "channel:")
    tasks = _prefixed(body, "task:")
    mcp = _prefixed(body, "mcp:")
    ready_at = daemon.ready_at
    return {
        **body,
        "channels": channels,
        "tasks": tasks,
        "mcp": mcp,
        "model": daemon.settings.llm.model,
        "pid": os.getpid(),
        "ready_for_s": round(time.time() - ready_at, 1) if ready_at is not None else None,
        "queue": {
            "inbox": len(await daemon.bus.inbox.pending()),  # journaled, not yet answered
            "waiting": daemon.dispatcher.queued,  # in chat lanes behind a running turn
            "running": daemon.dispatcher.busy_workers,
            "outbox": await daemon.outbox.depth(),  # replies not yet delivered
        },
    }
