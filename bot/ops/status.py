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
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.daemon import Daemon


def _prefixed(parts: Mapping[str, str], prefix: str) -> dict[str, str]:
    """The parts named ``prefix<name>``, by name."""
    return {k.removeprefix(prefix): v for k, v in sorted(parts.items()) if k.startswith(prefix)}


async def live_status(daemon: Daemon) -> dict[str, object]:
    """The health verdict with every part (``parts``, as ``/healthz`` names them) and
    grouped (channels, tasks, MCP servers), and the process's model, pid, data folder,
    time since ``ready:`` and queue depths."""
    health = await daemon.health()
    parts, info = dict(health.parts), dict(health.info)
    ready_at = daemon.ready_at
    return {
        "status": "ok" if health.ok else "failing",
        "failing": [name for name, state in parts.items() if state != "ok"],
        "parts": parts,
        "channels": _prefixed(parts, "channel:"),
        "tasks": _prefixed(parts, "task:"),
        "mcp": _prefixed(info, "mcp:"),
        "replica": info.get("replica"),  # among replicas on PostgreSQL: who, holding what
        "leases": info.get("leases"),
        "model": daemon.settings.llm.model,
        "pid": os.getpid(),
        "data_dir": str(daemon.settings.data_dir.resolve()),  # bot status: the same folder?
        "ready_for_s": round(time.time() - ready_at, 1) if ready_at is not None else None,
        "queue": {
            "inbox": len(await daemon.bus.inbox.pending()),  # journaled, not yet answered
            "waiting": daemon.dispatcher.queued,  # in chat lanes behind a running turn
            "running": daemon.dispatcher.busy_workers,
            "outbox": await daemon.outbox.depth(),  # replies not yet delivered
        },
    }
