"""What ``bot status`` reads from the store: reminders (the next ones, and the due ones
held for a channel that is not running), the inbox and outbox, and with PostgreSQL the
replicas' heartbeats and leases. Read only: a missing SQLite file is not created, a
schema this release would migrate is not opened."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Any

from bot.config import Settings
from bot.errors import StoreError
from bot.messages import utcnow
from bot.reminders.timeparse import format_local
from bot.store.location import describe, is_postgres, peek_version, storage_for
from bot.store.reminders import Reminder
from bot.store.schema import MIGRATIONS

MAX_WAITING = 20  # due reminders listed one by one; the rest are counted


async def stored(settings: Settings, shown: int, running: set[str] | None) -> dict[str, Any]:
    """``store`` (where, and why it could not be read), ``queue`` (inbox, outbox),
    ``reminders`` and, with PostgreSQL, ``replicas`` (None when the store could not be
    read: an empty list would say no replica beats). ``running``: the channels a live
    daemon runs (None: no daemon answered)."""
    url = settings.store.url.get_secret_value()
    report: dict[str, Any] = {
        "store": {"where": describe(url, settings.data_dir), "error": None},
        "queue": None,
        "reminders": None,
        "replicas": [] if is_postgres(url) else None,
    }
    try:
        unreadable = await _unreadable(url, settings)
        if unreadable:
            report["store"]["error"] = unreadable
            return report | {"replicas": None}  # not read: no count to show or go by
        report.update(await _read(url, settings, shown, running))
        if is_postgres(url):
            report["replicas"] = await _replicas(url)
    except StoreError as exc:
        report["store"]["error"] = str(exc)
        report["replicas"] = None
    return report


async def _unreadable(url: str, settings: Settings) -> str:
    """Why the store is not read (empty: it is at this release's schema)."""
    version = await peek_version(url, settings.data_dir)
    latest = len(MIGRATIONS)
    if version is None:
        return "no database yet (created at the first start)"
    if version < latest:
        return f"schema version {version}, not read: the next start migrates it to {latest}"
    if version > latest:
        return f"schema version {version} is newer than this release ({latest}): upgrade"
    return ""


async def _read(
    url: str, settings: Settings, shown: int, running: set[str] | None
) -> dict[str, Any]:
    storage = storage_for(url, settings.data_dir)
    await storage.backend.open()
    try:
        active = await storage.reminders.active()  # by next fire time
        inbox = len(await storage.inbox.pending())
        outbox = await storage.outbox.depth()
    finally:
        await storage.backend.close()
    now = utcnow()
    due = [r for r in active if r.next_fire_at is not None and r.next_fire_at <= now]
    upcoming = [r for r in active if r.next_fire_at is not None and r.next_fire_at > now]
    return {
        "queue": {"inbox": inbox, "outbox": outbox},
        "reminders": {
            "active": len(active),
            "next": [_entry(r, running) for r in upcoming[:shown]],
            "waiting": [_entry(r, running, due=True) for r in due[:MAX_WAITING]],
            "waiting_count": len(due),
        },
    }


def _entry(r: Reminder, running: set[str] | None, *, due: bool = False) -> dict[str, Any]:
    """One reminder for the report: its time in the owner's zone, and whether (and why)
    it waits for its channel."""
    held = running is None or r.key.channel not in running
    why = None
    if held and running is None:
        why = f"no daemon answers: it fires when one runs channel {r.key.channel}"
    elif held:
        why = f"channel {r.key.channel} is not running"
    return {
        "id": r.id,
        "kind": r.kind.value,
        "at": r.next_fire_at.isoformat() if r.next_fire_at else None,
        "local": _local(r.next_fire_at, r.timezone),
        "repeat": r.recurrence,
        "chat": str(r.key),
        "text": r.content,
        "waiting": why if (due or (held and running is not None)) else None,
    }


def _local(when: datetime | None, zone: str) -> str:
    if when is None:
        return "-"
    try:
        return format_local(when, zone)
    except (ValueError, KeyError):  # a zone this machine's tz database lacks
        return format_local(when, "UTC")


async def _replicas(url: str) -> list[dict[str, Any]]:
    """Every replica row (live or not yet forgotten) with the leases it holds."""
    import asyncpg

    from bot.cluster.leases import leases, replicas

    try:
        conn = await asyncpg.connect(url, timeout=10)
    except (OSError, TimeoutError, asyncpg.PostgresError) as exc:
        raise StoreError(f"cannot read the replicas: {exc}") from exc
    try:
        rows, held = await replicas(conn), await leases(conn)
    finally:
        await conn.close()
    return [
        {
            **asdict(r),
            "leases": [
                {"name": h.name, "token": h.token, "expires_in_ms": h.expires_in_ms}
                for h in held
                if h.owner == r.replica
            ],
        }
        for r in rows
    ]
