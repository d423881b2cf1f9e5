"""Who may talk to the bot beyond the config file: pairing codes, approvals, usernames.

A stranger's pending pairing request, the users an admin approved (so an approval
survives a restart), and each ``allow_from`` username bound to the account id that first
wrote under it (so a later owner of the name is not let in). Times are ISO 8601 UTC.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.messages import ChatKey
from bot.store.db import Database


@dataclass(frozen=True, slots=True)
class PairingRequest:
    code: str
    key: ChatKey  # where the stranger asked: the approval notice goes there
    user_id: str
    user_name: str
    created_at: datetime
    expires_at: datetime

    @property
    def sender(self) -> str:
        return f"{self.key.channel}:{self.user_id}"


@dataclass(frozen=True, slots=True)
class ApprovedUser:
    channel: str
    user_id: str
    user_name: str
    approved_by: str
    approved_at: datetime

    @property
    def sender(self) -> str:
        return f"{self.channel}:{self.user_id}"


def _iso(at: datetime) -> str:
    return at.astimezone(UTC).isoformat()


def _request(row: sqlite3.Row) -> PairingRequest:
    return PairingRequest(
        code=row["code"],
        key=ChatKey(row["channel"], row["chat_id"], row["thread_id"] or None),
        user_id=row["user_id"],
        user_name=row["user_name"],
        created_at=datetime.fromisoformat(row["created_at"]),
        expires_at=datetime.fromisoformat(row["expires_at"]),
    )


_REQUEST_COLUMNS = "code, channel, chat_id, thread_id, user_id, user_name, created_at, expires_at"


class AccessStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add_request(self, request: PairingRequest, *, max_pending: int) -> bool:
        """Store ``request`` unless its channel already has ``max_pending`` live ones.

        One statement, so the cap holds however many strangers ask at once. Expired
        requests of the channel go first (the table stays as small as the cap).
        """
        now = _iso(request.created_at)
        key = request.key
        await self._db.execute(
            "DELETE FROM pairing_requests WHERE channel = ? AND expires_at <= ?",
            (key.channel, now),
        )
        added = await self._db.execute_count(
            f"INSERT OR IGNORE INTO pairing_requests ({_REQUEST_COLUMNS})"
            " SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE (SELECT COUNT(*) FROM pairing_requests"
            " WHERE channel = ? AND expires_at > ?) < ?",
            (
                request.code,
                key.channel,
                key.chat_id,
                key.thread_id or "",
                request.user_id,
                request.user_name,
                now,
                _iso(request.expires_at),
                key.channel,
                now,
                max_pending,
            ),
        )
        return added == 1

    async def request_of(self, channel: str, user_id: str, now: datetime) -> PairingRequest | None:
        row = await self._db.fetchone(
            f"SELECT {_REQUEST_COLUMNS} FROM pairing_requests"
            " WHERE channel = ? AND user_id = ? AND expires_at > ?",
            (channel, user_id, _iso(now)),
        )
        return _request(row) if row else None

    async def pending_requests(self, now: datetime) -> list[PairingRequest]:
        rows = await self._db.fetchall(
            f"SELECT {_REQUEST_COLUMNS} FROM pairing_requests WHERE expires_at > ?"
            " ORDER BY created_at, code",
            (_iso(now),),
        )
        return [_request(r) for r in rows]

    async def take_request(self, code: str, now: datetime) -> PairingRequest | None:
        """Remove the live request with ``code`` and return it (None: unknown or expired)."""
        row = await self._db.fetchone(
            f"SELECT {_REQUEST_COLUMNS} FROM pairing_requests WHERE code = ? AND expires_at > ?",
            (code, _iso(now)),
        )
        if row is None:
            return None
        taken = await self._db.execute_count("DELETE FROM pairing_requests WHERE code = ?", (code,))
        return _request(row) if taken else None  # another caller took it first

    async def approve(self, request: PairingRequest, by: str, at: datetime) -> None:
        await self._db.execute(
            "INSERT INTO approved_users (channel, user_id, user_name, approved_by, approved_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (channel, user_id) DO UPDATE SET"
            " user_name = excluded.user_name, approved_by = excluded.approved_by,"
            " approved_at = excluded.approved_at",
            (request.key.channel, request.user_id, request.user_name, by, _iso(at)),
        )

    async def is_approved(self, channel: str, user_id: str) -> bool:
        row = await self._db.fetchone(
            "SELECT 1 FROM approved_users WHERE channel = ? AND user_id = ?", (channel, user_id)
        )
        return row is not None

    async def approved_users(self) -> list[ApprovedUser]:
        rows = await self._db.fetchall(
            "SELECT channel, user_id, user_name, approved_by, approved_at FROM approved_users"
            " ORDER BY approved_at, channel, user_id"
        )
        return [
            ApprovedUser(
                r["channel"],
                r["user_id"],
                r["user_name"],
                r["approved_by"],
                datetime.fromisoformat(r["approved_at"]),
            )
            for r in rows
        ]

    async def revoke(self, channel: str, user_id: str) -> bool:
        removed = await self._db.execute_count(
            "DELETE FROM approved_users WHERE channel = ? AND user_id = ?", (channel, user_id)
        )
        return removed > 0

    async def bind_name(self, channel: str, name: str, user_id: str, at: datetime) -> str:
        """Bind ``name`` to ``user_id`` unless already bound; return the id it is bound to."""
        await self._db.execute(
            "INSERT OR IGNORE INTO allow_names (channel, name, user_id, bound_at)"
            " VALUES (?, ?, ?, ?)",
            (channel, name, user_id, _iso(at)),
        )
        row = await self._db.fetchone(
            "SELECT user_id FROM allow_names WHERE channel = ? AND name = ?", (channel, name)
        )
        return str(row["user_id"]) if row else user_id

    async def name_bindings(self) -> dict[tuple[str, str], str]:
        rows = await self._db.fetchall("SELECT channel, name, user_id FROM allow_names")
        return {(r["channel"], r["name"]): r["user_id"] for r in rows}
