"""Pairing: how a stranger gets in without the admin editing the config.

A stranger's direct message gets a short code instead of a model call; the admin
approves it (``/approve <code>`` in chat or ``bot pairing approve <code>``) and the user
is stored as approved, so the approval survives restarts. Codes use an alphabet without
look-alikes (no 0/O, 1/I/L) because people read them off one screen and type them into
another, and expire after an hour.

Squatting: an account holds one code at a time; a denied account gets none for
``denied_for`` (a day by default, never less than a code's lifetime); a channel holds at
most ``max_pending`` codes, and when it is full the oldest is pushed out rather than the
newcomer turned away (a fixed cap alone lets a few accounts lock everyone out for an
hour, renewable), its account held until that code would have expired, so pushing a
newcomer's code out takes ``max_pending`` fresh accounts within the admin's reply time.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from bot.errors import ToolError
from bot.messages import InboundMessage, utcnow
from bot.store.access import DENIED, ApprovedUser, PairingHold, PairingRequest
from bot.store.base import Access

if TYPE_CHECKING:  # bot.config.settings imports the channel registry
    from bot.config.settings import AccessSettings

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
    """The answer to a stranger: their code (new or repeated), or None while the account
    is held (``hold``: denied, or its code pushed out by newer ones)."""

    request: PairingRequest | None
    new: bool = False
    hold: PairingHold | None = None


class Pairing:
    def __init__(
        self,
        store: Access,
        *,
        ttl: timedelta = timedelta(hours=1),
        max_pending: int = 10,
        denied_for: timedelta = timedelta(hours=24),
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.store = store
        self.ttl = ttl
        self.max_pending = max_pending
        self.denied_for = max(denied_for, ttl)  # at least a code's lifetime
        self._clock = clock

    @classmethod
    def from_settings(cls, store: Access, settings: AccessSettings) -> Pairing:
        return cls(
            store,
            ttl=timedelta(minutes=settings.pairing_ttl_min),
            max_pending=settings.max_pending,
            denied_for=timedelta(hours=settings.pairing_denied_h),
        )

    async def issue(self, msg: InboundMessage) -> Issued:
        """The pending code of ``msg``'s sender, or a new one unless the account is held."""
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
        admission = await self.store.add_request(request, max_pending=self.max_pending)
        for old in admission.evicted:
            log.warning(
                "pairing: the code of %s pushed out by a newer request (%s holds at most %d)",
                old.sender,
                channel,
                self.max_pending,
            )
        if admission.hold is not None:
            return Issued(None, hold=admission.hold)
        if not admission.added:  # the same account asked twice at once: the first code
            return Issued(await self.store.request_of(channel, msg.user_id, now))
        log.info("pairing: code issued to %s (%s)", msg.sender, msg.user_name or "-")
        return Issued(request, new=True)

    async def approve(self, code: str, by: str) -> PairingRequest:
        request = await self._take(code)
        await self.store.approve(request, by, self._clock())
        log.warning("pairing: %s approved by %s", request.sender, by)
        return request

    async def deny(self, code: str, by: str) -> PairingRequest:
        """Void the code and give its account no new one for :attr:`denied_for`."""
        request = await self._take(code)
        until = self._clock() + self.denied_for
        await self.store.hold(PairingHold(request.key.channel, request.user_id, DENIED, until))
        log.warning("pairing: %s denied by %s (no new code before %s)", request.sender, by,
                    until.isoformat(timespec="minutes"))  # fmt: skip
        return request

    async def pending(self) -> list[PairingRequest]:
        return await self.store.pending_requests(self._clock())

    async def approved(self) -> list[ApprovedUser]:
        return await self.store.approved_users()

    async def approved_page(self, limit: int, offset: int = 0) -> list[ApprovedUser]:
        return await self.store.approved_page(limit, offset)

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
