"""``GET /status``: what the running daemon knows of itself, as JSON, for ``bot status``.

``/healthz`` says whether it works (and is what supervisors poll); this says what it is
doing: the same verdict and parts, plus the model, the process, how long it has been
ready, and its queues. No chat content and no reminder text: the ``[web]`` app may be
reachable by a container runtime or Prometheus. ``bot status`` reads reminders and the
replicas' leases from the store itself (:mod:`bot.cli.status`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.daemon import Daemon

log = logging.getLogger(__name__)

# A database that does not answer the queue counts within this leaves them null (as
# /healthz's probe gives up after 2 s): /status still answers, and ``bot status`` can tell
# a running daemon with a stalled database from one that is not running.
QUEUE_READ_TIMEOUT_S = 2.0


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
            "waiting": daemon.dispatcher.queued,  # in chat lanes behind a running turn
            "running": daemon.dispatcher.busy_workers,
            **await _stored_queues(daemon),
        },
    }


async def _stored_queues(daemon: Daemon) -> dict[str, object]:
    """``inbox`` (journaled, not yet answered) and ``outbox`` (replies not yet delivered),
    counted in the store; both None, and ``why``, when it does not answer in time or
    fails (a write lock held by another process: a backup, a sqlite3 shell)."""
    try:
        async with asyncio.timeout(QUEUE_READ_TIMEOUT_S):
            inbox = len(await daemon.bus.inbox.pending())
            outbox = await daemon.outbox.depth()
    except TimeoutError:
        why = f"the database did not answer within {QUEUE_READ_TIMEOUT_S:g} s"
    except Exception as exc:  # what the store raises differs by backend; /status answers
        log.debug("queue depths not read", exc_info=True)
        why = f"the database could not be read: {exc}"
    else:
        return {"inbox": inbox, "outbox": outbox}
    return {"inbox": None, "outbox": None, "why": why}
