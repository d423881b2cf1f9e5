"""The admin page's login links and sessions on PostgreSQL (see :mod:`bot.store.admin`)."""

from __future__ import annotations

from datetime import datetime

from bot.store.admin import KEEP_EXPIRED, LINK, SESSION, LinkCheck, LinkState, link_check
from bot.store.postgres.database import PostgresDatabase


class PgAdminTokens:
    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db

    async def add_token(
        self, token_hash: str, kind: str, admin: str, now: datetime, expires_at: datetime
    ) -> None:
        async with self._db.transaction() as conn:
            await conn.execute(
                "DELETE FROM admin_tokens WHERE expires_at < $1",
                (now - KEEP_EXPIRED).isoformat(),
            )
            await conn.execute(
                "INSERT INTO admin_tokens (token_hash, kind, admin, created_at, expires_at)"
                " VALUES ($1, $2, $3, $4, $5)",
                token_hash,
                kind,
                admin,
                now.isoformat(),
                expires_at.isoformat(),
            )

    async def check_link(self, token_hash: str, now: datetime) -> LinkCheck:
        row = await self._db.fetchrow(
            "SELECT admin, expires_at, used_at FROM admin_tokens"
            " WHERE token_hash = $1 AND kind = $2",
            token_hash,
            LINK,
        )
        return link_check(row, now)

    async def use_link(self, token_hash: str, now: datetime) -> LinkCheck:
        """Mark a valid link used in one statement (two browsers: one session)."""
        taken = await self._db.fetchval(
            "UPDATE admin_tokens SET used_at = $1 WHERE token_hash = $2 AND kind = $3"
            " AND used_at IS NULL AND expires_at > $1 RETURNING admin",
            now.isoformat(),
            token_hash,
            LINK,
        )
        if taken is not None:
            return LinkCheck(LinkState.VALID, str(taken))
        return await self.check_link(token_hash, now)

    async def session(self, token_hash: str, now: datetime, idle_until: datetime) -> str | None:
        found = await self._db.fetchval(
            "UPDATE admin_tokens SET expires_at = $1 WHERE token_hash = $2 AND kind = $3"
            " AND expires_at > $4 RETURNING admin",
            idle_until.isoformat(),
            token_hash,
            SESSION,
            now.isoformat(),
        )
        return str(found) if found is not None else None

    async def end_sessions(self, token_hash: str | None = None) -> int:
        if token_hash is None:
            return await self._db.execute("DELETE FROM admin_tokens WHERE kind = $1", SESSION)
        return await self._db.execute(
            "DELETE FROM admin_tokens WHERE token_hash = $1 AND kind = $2", token_hash, SESSION
        )
