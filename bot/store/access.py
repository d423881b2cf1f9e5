"""Who may talk to the bot beyond the config file: pairing codes, approvals, usernames.

A stranger's pending pairing request, the accounts held from asking again (denied, or
pushed out of a full channel), the users an admin approved (so an approval survives a
restart), and each ``allow_from`` username bound to the account id that first wrote
under it (so a later owner of the name is not let in). Times are ISO 8601 UTC.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.messages import ChatKey
from bot.store.db import Database
from bot.store.rows import Row


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


DENIED, EVICTED = "denied", "evicted"


@dataclass(frozen=True, slots=True)
class PairingHold:
    """An account that gets no new code before ``until``: an admin denied it
    (:data:`DENIED`), or a newer request pushed its code out (:data:`EVICTED`)."""

    channel: str
    user_id: str
    reason: str
    until: datetime


@dataclass(frozen=True, slots=True)
class Admission:
    """What :meth:`AccessStore.add_request` did: stored the request (pushing the oldest
    of a full channel out), or not, because the account is held."""

    added: bool
    evicted: tuple[PairingRequest, ...] = ()
    hold: PairingHold | None = None


def _iso(at: datetime) -> str:
    return at.astimezone(UTC).isoformat()


APPROVED = "SELECT channel, user_id, user_name, approved_by, approved_at FROM approved_users"


def pairing_request(row: Row) -> PairingRequest:
    return PairingRequest(
        code=row["code"],
        key=ChatKey(row["channel"], row["chat_id"], row["thread_id"] or None),
        user_id=row["user_id"],
        user_name=row["user_name"],
        created_at=datetime.fromisoformat(row["created_at"]),
        expires_at=datetime.fromisoformat(row["expires_at"]),
    )


def approved_user(row: Row) -> ApprovedUser:
    return ApprovedUser(
        row["channel"],
        row["user_id"],
        row["user_name"],
        row["approved_by"],
        datetime.fromisoformat(row["approved_at"]),
    )


REQUEST_COLUMNS = "code, channel, chat_id, thread_id, user_id, user_name, created_at, expires_at"


class AccessStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add_request(self, request: PairingRequest, *, max_pending: int) -> Admission:
        """Store ``request`` unless its account is held or already has a live one.

        A channel keeps at most ``max_pending`` live requests: when full, the oldest go
        (so a newcomer always gets a code) and their accounts are held until those codes
        would have expired (so pushed-out accounts cannot push back at once). One
        transaction, so the cap holds however many strangers ask at once; expired
        requests and holds of the channel go first.
        """

        return await self._db.run_in_transaction(
            lambda c: _admit(c, request, max_pending=max_pending)
        )

    async def hold(self, hold: PairingHold) -> None:
        """Give ``hold.user_id`` no new code before ``hold.until`` (replacing any hold)."""
        await self._db.run(lambda c: _put_hold(c, hold))

    async def hold_of(self, channel: str, user_id: str, now: datetime) -> PairingHold | None:
        found = await self._db.run(lambda c: _hold_of(c, channel, user_id))
        return found if found is not None and found.until > now else None

    async def prune_pairing(self, now: datetime) -> int:
        """Drop expired requests and holds of every channel (those of a channel nobody
        asks on again are otherwise never looked at); returns the rows removed."""

        def work(c: sqlite3.Connection) -> int:
            at = _iso(now)
            gone = c.execute("DELETE FROM pairing_requests WHERE expires_at <= ?", (at,))
            held = c.execute("DELETE FROM pairing_holds WHERE held_until <= ?", (at,))
            return gone.rowcount + held.rowcount

        return await self._db.run_in_transaction(work)

    async def request_of(self, channel: str, user_id: str, now: datetime) -> PairingRequest | None:
        row = await self._db.fetchone(
            f"SELECT {REQUEST_COLUMNS} FROM pairing_requests"
            " WHERE channel = ? AND user_id = ? AND expires_at > ?",
            (channel, user_id, _iso(now)),
        )
        return pairing_request(row) if row else None

    async def pending_requests(self, now: datetime) -> list[PairingRequest]:
        rows = await self._db.fetchall(
            f"SELECT {REQUEST_COLUMNS} FROM pairing_requests WHERE expires_at > ?"
            " ORDER BY created_at, code",
            (_iso(now),),
        )
        return [pairing_request(r) for r in rows]

    async def take_request(self, code: str, now: datetime) -> PairingRequest | None:
        """Remove the live request with ``code`` and return it (None: unknown or expired)."""
        row = await self._db.fetchone(
            f"SELECT {REQUEST_COLUMNS} FROM pairing_requests WHERE code = ? AND expires_at > ?",
            (code, _iso(now)),
        )
        if row is None:
            return None
        taken = await self._db.execute_count("DELETE FROM pairing_requests WHERE code = ?", (code,))
        return pairing_request(row) if taken else None  # another caller took it first

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
        rows = await self._db.fetchall(f"{APPROVED} ORDER BY approved_at, channel, user_id")
        return [approved_user(r) for r in rows]

    async def approved_page(self, limit: int, offset: int = 0) -> list[ApprovedUser]:
        """One page of the approved users, oldest approval first."""
        rows = await self._db.fetchall(
            f"{APPROVED} ORDER BY approved_at, channel, user_id LIMIT ? OFFSET ?",
            (limit, offset),
        )
        return [approved_user(r) for r in rows]

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


def request_params(request: PairingRequest) -> tuple[str, ...]:
    key = request.key
    return (
        request.code,
        key.channel,
        key.chat_id,
        key.thread_id or "",
        request.user_id,
        request.user_name,
        _iso(request.created_at),
        _iso(request.expires_at),
    )


def _put_hold(c: sqlite3.Connection, hold: PairingHold) -> None:
    c.execute(
        "INSERT INTO pairing_holds (channel, user_id, reason, held_until) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (channel, user_id) DO UPDATE SET reason = excluded.reason,"
        " held_until = excluded.held_until",
        (hold.channel, hold.user_id, hold.reason, _iso(hold.until)),
    )


def _hold_of(c: sqlite3.Connection, channel: str, user_id: str) -> PairingHold | None:
    """The account's hold, expired or not (callers compare or have pruned first)."""
    row = c.execute(
        "SELECT reason, held_until FROM pairing_holds WHERE channel = ? AND user_id = ?",
        (channel, user_id),
    ).fetchone()
    return hold_row(channel, user_id, row) if row is not None else None


def hold_row(channel: str, user_id: str, row: Row) -> PairingHold:
    return PairingHold(channel, user_id, row["reason"], datetime.fromisoformat(row["held_until"]))


def _admit(c: sqlite3.Connection, request: PairingRequest, *, max_pending: int) -> Admission:
    """:meth:`AccessStore.add_request` inside its transaction (a write first: the
    database's write lock is taken before anything is counted)."""
    now, channel = _iso(request.created_at), request.key.channel
    c.execute("DELETE FROM pairing_requests WHERE channel = ? AND expires_at <= ?", (channel, now))
    c.execute("DELETE FROM pairing_holds WHERE channel = ? AND held_until <= ?", (channel, now))
    hold = _hold_of(c, channel, request.user_id)
    if hold is not None:
        return Admission(False, hold=hold)
    live = c.execute(
        f"SELECT {REQUEST_COLUMNS} FROM pairing_requests WHERE channel = ?"
        " ORDER BY created_at, code",
        (channel,),
    ).fetchall()
    if any(row["user_id"] == request.user_id for row in live):
        return Admission(False)
    evicted = tuple(pairing_request(row) for row in live[: max(0, len(live) - max_pending + 1)])
    for old in evicted:
        c.execute("DELETE FROM pairing_requests WHERE code = ?", (old.code,))
        _put_hold(c, PairingHold(channel, old.user_id, EVICTED, old.expires_at))
    added = c.execute(
        f"INSERT OR IGNORE INTO pairing_requests ({REQUEST_COLUMNS})"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        request_params(request),
    ).rowcount
    return Admission(added == 1, evicted)
