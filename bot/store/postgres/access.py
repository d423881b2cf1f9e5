"""Pairing requests, approvals and bound usernames on PostgreSQL
(see :mod:`bot.store.access`)."""

from __future__ import annotations

from datetime import UTC, datetime

import asyncpg

from bot.store.access import (
    APPROVED,
    EVICTED,
    REQUEST_COLUMNS,
    Admission,
    ApprovedUser,
    PairingHold,
    PairingRequest,
    approved_user,
    hold_row,
    pairing_request,
    request_params,
)
from bot.store.postgres.database import PostgresDatabase, changed


def _iso(at: datetime) -> str:
    return at.astimezone(UTC).isoformat()


class PgAccess:
    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db

    async def add_request(self, request: PairingRequest, *, max_pending: int) -> Admission:
        """Store ``request`` unless its account is held or already has a live one; a full
        channel pushes its oldest out, each account held until its code would have
        expired (see :meth:`bot.store.access.AccessStore.add_request`). One transaction
        under a lock on the channel, so the cap holds however many strangers ask at once."""
        now, channel = _iso(request.created_at), request.key.channel
        async with self._db.transaction() as conn:
            await conn.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", f"pairing:{channel}"
            )
            await conn.execute(
                "DELETE FROM pairing_requests WHERE channel = $1 AND expires_at <= $2", channel, now
            )
            await conn.execute(
                "DELETE FROM pairing_holds WHERE channel = $1 AND held_until <= $2", channel, now
            )
            hold = await _hold_of(conn, channel, request.user_id)
            if hold is not None:
                return Admission(False, hold=hold)
            live = await conn.fetch(
                f"SELECT {REQUEST_COLUMNS} FROM pairing_requests WHERE channel = $1"
                " ORDER BY created_at, code",
                channel,
            )
            if any(row["user_id"] == request.user_id for row in live):
                return Admission(False)
            evicted = tuple(pairing_request(r) for r in live[: max(0, len(live) - max_pending + 1)])
            for old in evicted:
                await conn.execute("DELETE FROM pairing_requests WHERE code = $1", old.code)
                await _put_hold(conn, PairingHold(channel, old.user_id, EVICTED, old.expires_at))
            added = await conn.fetchval(
                f"INSERT INTO pairing_requests ({REQUEST_COLUMNS}) VALUES"
                " ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING RETURNING 1",
                *request_params(request),
            )
        return Admission(added is not None, evicted)

    async def hold(self, hold: PairingHold) -> None:
        async with self._db.connection() as conn:
            await _put_hold(conn, hold)

    async def hold_of(self, channel: str, user_id: str, now: datetime) -> PairingHold | None:
        async with self._db.connection() as conn:
            found = await _hold_of(conn, channel, user_id)
        return found if found is not None and found.until > now else None

    async def prune_pairing(self, now: datetime) -> int:
        at = _iso(now)
        async with self._db.transaction() as conn:
            gone = await conn.execute("DELETE FROM pairing_requests WHERE expires_at <= $1", at)
            held = await conn.execute("DELETE FROM pairing_holds WHERE held_until <= $1", at)
        return changed(gone) + changed(held)

    async def request_of(self, channel: str, user_id: str, now: datetime) -> PairingRequest | None:
        row = await self._db.fetchrow(
            f"SELECT {REQUEST_COLUMNS} FROM pairing_requests"
            " WHERE channel = $1 AND user_id = $2 AND expires_at > $3",
            channel,
            user_id,
            _iso(now),
        )
        return pairing_request(row) if row else None

    async def pending_requests(self, now: datetime) -> list[PairingRequest]:
        rows = await self._db.fetch(
            f"SELECT {REQUEST_COLUMNS} FROM pairing_requests WHERE expires_at > $1"
            " ORDER BY created_at, code",
            _iso(now),
        )
        return [pairing_request(r) for r in rows]

    async def take_request(self, code: str, now: datetime) -> PairingRequest | None:
        """Remove the live request with ``code`` and return it, in one statement (two
        callers cannot both take it)."""
        row = await self._db.fetchrow(
            "DELETE FROM pairing_requests WHERE code = $1 AND expires_at > $2"
            f" RETURNING {REQUEST_COLUMNS}",
            code,
            _iso(now),
        )
        return pairing_request(row) if row else None

    async def approve(self, request: PairingRequest, by: str, at: datetime) -> None:
        await self._db.execute(
            "INSERT INTO approved_users (channel, user_id, user_name, approved_by, approved_at)"
            " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (channel, user_id) DO UPDATE SET"
            " user_name = excluded.user_name, approved_by = excluded.approved_by,"
            " approved_at = excluded.approved_at",
            request.key.channel,
            request.user_id,
            request.user_name,
            by,
            _iso(at),
        )

    async def is_approved(self, channel: str, user_id: str) -> bool:
        found = await self._db.fetchval(
            "SELECT 1 FROM approved_users WHERE channel = $1 AND user_id = $2", channel, user_id
        )
        return found is not None

    async def approved_users(self) -> list[ApprovedUser]:
        rows = await self._db.fetch(f"{APPROVED} ORDER BY approved_at, channel, user_id")
        return [approved_user(r) for r in rows]

    async def approved_page(self, limit: int, offset: int = 0) -> list[ApprovedUser]:
        rows = await self._db.fetch(
            f"{APPROVED} ORDER BY approved_at, channel, user_id LIMIT $1 OFFSET $2", limit, offset
        )
        return [approved_user(r) for r in rows]

    async def revoke(self, channel: str, user_id: str) -> bool:
        removed = await self._db.execute(
            "DELETE FROM approved_users WHERE channel = $1 AND user_id = $2", channel, user_id
        )
        return removed > 0

    async def bind_name(self, channel: str, name: str, user_id: str, at: datetime) -> str:
        await self._db.execute(
            "INSERT INTO allow_names (channel, name, user_id, bound_at) VALUES ($1, $2, $3, $4)"
            " ON CONFLICT DO NOTHING",
            channel,
            name,
            user_id,
            _iso(at),
        )
        found = await self._db.fetchval(
            "SELECT user_id FROM allow_names WHERE channel = $1 AND name = $2", channel, name
        )
        return str(found) if found is not None else user_id

    async def name_bindings(self) -> dict[tuple[str, str], str]:
        rows = await self._db.fetch("SELECT channel, name, user_id FROM allow_names")
        return {(r["channel"], r["name"]): r["user_id"] for r in rows}


async def _put_hold(conn: asyncpg.Connection, hold: PairingHold) -> None:
    await conn.execute(
        "INSERT INTO pairing_holds (channel, user_id, reason, held_until) VALUES ($1, $2, $3, $4)"
        " ON CONFLICT (channel, user_id) DO UPDATE SET reason = excluded.reason,"
        " held_until = excluded.held_until",
        hold.channel,
        hold.user_id,
        hold.reason,
        _iso(hold.until),
    )


async def _hold_of(conn: asyncpg.Connection, channel: str, user_id: str) -> PairingHold | None:
    row = await conn.fetchrow(
        "SELECT reason, held_until FROM pairing_holds WHERE channel = $1 AND user_id = $2",
        channel,
        user_id,
    )
    return hold_row(channel, user_id, row) if row else None
