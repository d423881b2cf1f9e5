"""The admin page's login links and sessions (hashed tokens, see migration 0016).

A link is redeemed once: the UPDATE that marks it used is the single point of truth, so
two browsers racing with one link get one session. Sessions slide: use moves their
expiry (at most every few minutes: a page load is a read), an idle one lapses. Expired
rows are dropped when new ones are written.
"""

from __future__ import annotations

import functools
import logging
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from bot.store.busy import busy
from bot.store.db import Database
from bot.store.rows import Row

log = logging.getLogger(__name__)


class LinkState(StrEnum):
    """What a login link is now: usable, already used, past its time, or unknown."""

    VALID = "valid"
    USED = "used"
    EXPIRED = "expired"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class LinkCheck:
    state: LinkState
    admin: str = ""


LINK = "link"
SESSION = "session"
KEEP_EXPIRED = timedelta(days=1)
SLIDE_STEP = timedelta(minutes=5)  # a session's expiry is moved by at least this much


def _iso(at: datetime) -> str:
    return at.isoformat()


def link_check(row: Row | None, now: datetime) -> LinkCheck:
    """What a link's row (admin, expires_at, used_at) says of it at ``now``."""
    if row is None:
        return LinkCheck(LinkState.UNKNOWN)
    if row["used_at"] is not None:
        return LinkCheck(LinkState.USED, row["admin"])
    if row["expires_at"] <= _iso(now):
        return LinkCheck(LinkState.EXPIRED, row["admin"])
    return LinkCheck(LinkState.VALID, row["admin"])


def _slide(conn: sqlite3.Connection, token_hash: str, to: datetime) -> None:
    """Move a session's expiry, unless another process holds the write lock now: the
    session has hours left, and the next page load moves it."""
    (wait,) = conn.execute("PRAGMA busy_timeout").fetchone()
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        conn.execute(
            "UPDATE admin_tokens SET expires_at = ? WHERE token_hash = ? AND kind = ?",
            (_iso(to), token_hash, SESSION),
        )
    except sqlite3.OperationalError as exc:
        if busy(exc) is None:
            raise
        log.info("admin session expiry not moved: %s (moved at the next page load)", exc)
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(wait)}")


class AdminTokenStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add_token(
        self, token_hash: str, kind: str, admin: str, now: datetime, expires_at: datetime
    ) -> None:
        # Rows a day past their expiry go (until then a stale link still says why).
        await self._db.execute(
            "DELETE FROM admin_tokens WHERE expires_at < ?", (_iso(now - KEEP_EXPIRED),)
        )
        await self._db.execute(
            "INSERT INTO admin_tokens (token_hash, kind, admin, created_at, expires_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (token_hash, kind, admin, _iso(now), _iso(expires_at)),
        )

    async def check_link(self, token_hash: str, now: datetime) -> LinkCheck:
        row = await self._db.fetchone(
            "SELECT admin, expires_at, used_at FROM admin_tokens WHERE token_hash = ? AND kind = ?",
            (token_hash, LINK),
        )
        return link_check(row, now)

    async def use_link(self, token_hash: str, now: datetime) -> LinkCheck:
        """Mark a valid link used and say whose it was; otherwise why it cannot be."""
        taken = await self._db.execute_count(
            "UPDATE admin_tokens SET used_at = ? WHERE token_hash = ? AND kind = ?"
            " AND used_at IS NULL AND expires_at > ?",
            (_iso(now), token_hash, LINK, _iso(now)),
        )
        found = await self.check_link(token_hash, now)
        if taken:
            return LinkCheck(LinkState.VALID, found.admin)
        return found

    async def session(self, token_hash: str, now: datetime, idle_until: datetime) -> str | None:
        """The admin of a live session, else None. A read: its expiry is moved to
        ``idle_until`` only once that is :data:`SLIDE_STEP` later, and never waits for
        another process's write lock (every page load wrote, so a backup holding it
        made each page wait 5 s and fail)."""
        row = await self._db.fetchone(
            "SELECT admin, expires_at FROM admin_tokens WHERE token_hash = ? AND kind = ?"
            " AND expires_at > ?",
            (token_hash, SESSION, _iso(now)),
        )
        if row is None:
            return None
        if row["expires_at"] < _iso(idle_until - SLIDE_STEP):
            await self._db.run(functools.partial(_slide, token_hash=token_hash, to=idle_until))
        return str(row["admin"])

    async def end_sessions(self, token_hash: str | None = None) -> int:
        """End one session, or every session (``None``); returns how many ended."""
        if token_hash is None:
            return await self._db.execute_count(
                "DELETE FROM admin_tokens WHERE kind = ?", (SESSION,)
            )
        return await self._db.execute_count(
            "DELETE FROM admin_tokens WHERE token_hash = ? AND kind = ?", (token_hash, SESSION)
        )
