"""SQLite's "database is locked" as the store's own error (:class:`~bot.errors.StoreBusy`),
for a caller that tells people to try again rather than showing a server error."""

from __future__ import annotations

import sqlite3

from bot.errors import StoreBusy

_BUSY = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})


def busy(exc: BaseException) -> StoreBusy | None:
    """``exc`` as :class:`StoreBusy` when it is a write another process's lock refused
    (SQLite's primary code: its extended ones, BUSY_SNAPSHOT and the like, count too)."""
    if isinstance(exc, StoreBusy):
        return exc
    if isinstance(exc, sqlite3.OperationalError):
        code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
        if code in _BUSY:
            return StoreBusy(str(exc))
    return None
