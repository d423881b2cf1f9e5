"""Inbound guards that run before a message reaches a chat worker.

Deny by default: a platform channel answers only users in its ``allow_from`` (ids or
usernames, ``"*"`` for everyone) and the global ``admins``. Local channels (the
terminal, in-process test channels) are trusted. A refused user is told once how to
get access, then ignored, and never costs a model call.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from bot.bus.base import Bus
from bot.dispatcher.screen import original_length
from bot.messages import InboundMessage, MessageKind, OutboundKind, OutboundMessage

log = logging.getLogger(__name__)


class AccessControl:
    def __init__(
        self,
        bus: Bus,
        allow_from: Mapping[str, Sequence[str]],
        admins: Sequence[str],
        trusted_channels: Sequence[str] = ("cli",),
    ) -> None:
        self._bus = bus
        self._trusted = frozenset(trusted_channels)
        self._allow = {ch: {str(x).lstrip("@").lower() for x in v} for ch, v in allow_from.items()}
        self._admins = {a.lower() for a in admins}
        self._told: set[str] = set()

    def is_admin(self, msg: InboundMessage) -> bool:
        return msg.key.channel in self._trusted or msg.sender.lower() in self._admins

    def allowed(self, msg: InboundMessage) -> bool:
        if msg.kind is MessageKind.SCHEDULED or self.is_admin(msg):
            return True
        allowed = self._allow.get(msg.key.channel, set())
        names = {msg.user_id.lower(), msg.user_name.lstrip("@").lower()} - {""}
        return "*" in allowed or bool(names & allowed)

    async def __call__(self, msg: InboundMessage) -> bool:
        if self.allowed(msg):
            return True
        log.info(
            "message from %s (%s) refused: not in channels.%s.allow_from",
            msg.sender,
            msg.user_name or "-",
            msg.key.channel,
        )
        if msg.sender not in self._told:
            await self._bus.put_outbound(
                OutboundMessage.reply(
                    msg,
                    (
                        "This bot only answers approved users. Ask its admin to add "
                        f"'{msg.user_id}' to channels.{msg.key.channel}.allow_from."
                    ),
                    OutboundKind.NOTICE,
                )
            )
            self._told.add(msg.sender)  # only once the notice is queued: a failure retries
        return False


class SizeGuard:
    """Refuses oversize messages with a clear reply instead of silently truncating."""

    def __init__(self, bus: Bus, max_chars: int) -> None:
        self._bus = bus
        self._max = max_chars

    async def __call__(self, msg: InboundMessage) -> bool:
        length = original_length(msg)
        if length <= self._max:
            return True
        await self._bus.put_outbound(
            OutboundMessage.reply(
                msg,
                (
                    f"That message is {length:,} characters long; the limit is "
                    f"{self._max:,}. Please shorten it or split it into parts."
                ),
                OutboundKind.NOTICE,
            )
        )
        return False
