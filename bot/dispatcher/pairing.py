"""Pairing: how a stranger gets in without the admin editing the config.

A stranger's direct message gets a short code instead of a model call; the admin
approves it (``/approve <code>`` in chat or ``bot pairing approve <code>``) and the user
is stored as approved, so the approval survives restarts. Codes use an alphabet without
look-alikes (no 0/O, 1/I/L) because people read them off one screen and type them into
another, expire after an hour, and a channel holds only a few pending at once so
strangers cannot fill the table.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.errors import ToolError
from bot.messages import InboundMessage, utcnow
from bot.store.access import ApprovedUser, PairingRequest
from bot.store.base import Access

log = logging.getLogger(__name__)

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 8


def new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def normalize_code(text: str) -> str:
    """What a person typed (any case, spaces, dashes) as a stored code."""
    return "".join(ch for ch in text.upper() if ch.isalnum())


@dataclass(frozen=True, slots=True)
class Issued:
    """The answer to a stranger: their code (new or repeated), or None when the channel
    already has as many pending requests as it may."""

    request: PairingRequest | None
    new: bool = False


class Pairing:
    def __init__(
        self,
        store: Access,
        *,
        ttl: timedelta = timedelta(hours=1),
        max_pending: int = 3,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.store = store
        self.ttl = ttl
        self.max_pending = max_pending
        self._clock = clock

    async def issue(self, msg: InboundMessage) -> Issued:
        """The pending code of ``msg``'s sender, or a new one if the channel has room."""
        now = self._clock()
        channel = msg.key.channel
        pending = await self.store.request_of(channel, msg.user_id, now)
        if pending is not None:
            return Issued(pending)
        request = PairingRequest(
            code=new_code(),
            key=msg.key,
            user_id=msg.user_id,
            user_name=msg.user_name,
            created_at=now,
            expires_at=now + self.ttl,
        )
        if not await self.store.add_request(request, max_pending=self.max_pending):
            log.warning("pairing: %d requests already pending on %s", self.max_pending, channel)
            return Issued(None)
        log.info("pairing: code issued to %s (%s)", msg.sender, msg.user_name or "-")
        return Issued(request, new=True)

    async def approve(self, code: str, by: str) -> PairingRequest:
        request = await self._take(code)
        await self.store.approve(request, by, self._clock())
        log.warning("pairing: %s approved by %s", request.sender, by)
        return request

    async def deny(self, code: str, by: str) -> PairingRequest:
        request = await self._take(code)
        log.warning("pairing: %s denied by %s", request.sender, by)
        return request

    async def pending(self) -> list[PairingRequest]:
        return await self.store.pending_requests(self._clock())

    async def approved(self) -> list[ApprovedUser]:
        return await self.store.approved_users()

    async def revoke(self, sender: str) -> str:
        """``"<channel>:<user id>"`` loses its approval; raises ToolError if it had none."""
        channel, sep, user_id = sender.strip().partition(":")
        if not sep or not channel or not user_id:
            raise ToolError("usage: revoke <channel>:<user id> (as `bot pairing list` shows)")
        if not await self.store.revoke(channel, user_id):
            raise ToolError(f"{channel}:{user_id} is not an approved user")
        log.warning("pairing: approval of %s:%s revoked", channel, user_id)
        return f"{channel}:{user_id}"

    async def _take(self, code: str) -> PairingRequest:
        wanted = normalize_code(code)
        if not wanted:
            raise ToolError("usage: /approve <code> or /deny <code>")
        request = await self.store.take_request(wanted, self._clock())
        if request is None:
            raise ToolError(f"no pending pairing code {wanted} (expired, or never issued)")
        return request


def describe_request(request: PairingRequest, now: datetime) -> str:
    left = max(0, int((request.expires_at - now).total_seconds() // 60))
    name = f" ({request.user_name})" if request.user_name else ""
    return f"{request.code}  {request.sender}{name}  expires in {left} min"
