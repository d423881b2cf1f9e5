"""Inbound guards that run before a message reaches a chat worker.

Deny by default: a platform channel answers only users in its ``allow_from`` (ids;
usernames are bound to the id first seen with them; ``"*"`` for everyone), the users
an admin approved by pairing, and the global ``admins``. Local channels (the terminal,
in-process test channels) are trusted. How a stranger is met is the channel's policy:
``pairing`` (the default when ``allow_from`` is empty) answers a direct message with a
pairing code (a pending one said again at most every :data:`CODE_AGAIN_S`);
``allowlist`` tells the stranger once, in a direct message, how to get access; ``open``
answers everyone. Strangers in groups are ignored under either (a notice there would
show every member a config key and the stranger's id). A refused message never costs
a model call, and a stranger gets no rate-limit notice (it promised an answer).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence

from bot.bus.base import Bus
from bot.dispatcher.allowlist import Members
from bot.dispatcher.pairing import Pairing
from bot.dispatcher.screen import original_length
from bot.lru import LRU
from bot.messages import ChatKey, InboundMessage, MessageKind, OutboundKind, OutboundMessage
from bot.store.access import DENIED, PairingHold
from bot.text import shows_nothing

log = logging.getLogger(__name__)

PAIRING, ALLOWLIST, OPEN = "pairing", "allowlist", "open"
TOLD_KEPT = 10_000  # strangers told once why they get no answer (then told again)
# A pending pairing code is said again to its stranger at most this often: each message
# answered with it made a flood of 20 messages 20 copies of one code.
CODE_AGAIN_S = 300.0
AUTO = "auto"  # pairing when the channel's allow_from is empty, else allowlist
PutInbound = Callable[[InboundMessage], Awaitable[None]]


class AccessControl:
    def __init__(
        self,
        bus: Bus,
        allow_from: Mapping[str, Sequence[str]],
        admins: Sequence[str],
        trusted_channels: Sequence[str] = ("cli",),
        *,
        policy: str = AUTO,
        pairing: Pairing | None = None,
        command_hints: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``command_hints``: per channel, how a command is typed there where a plain
        ``/approve`` would not reach the bot (said with the pairing code)."""
        self._bus = bus
        self._hints = dict(command_hints or {})
        self._trusted = frozenset(trusted_channels)
        self._members = Members(allow_from, pairing.store if pairing else None)
        self._admins = {a.lower() for a in admins}
        self._policy = policy
        self._pairing = pairing
        self._told: LRU[str, None] = LRU(TOLD_KEPT)
        self._codes_said: LRU[str, tuple[str, float]] = LRU(TOLD_KEPT)  # sender -> code, when
        self._clock = clock

    def is_admin(self, msg: InboundMessage) -> bool:
        return self._admin(msg.key.channel, msg.sender)

    def is_admin_sender(self, sender: str) -> bool:
        """Whether ``sender`` (``channel:user``, or ``cli``: a link the machine's own user
        made with ``bot admin link``) is an admin now, by today's configuration."""
        return sender == "cli" or self._admin(sender.split(":", 1)[0], sender)

    def _admin(self, channel: str, sender: str) -> bool:
        return channel in self._trusted or sender.lower() in self._admins

    def policy(self, channel: str) -> str:
        if self._policy != AUTO:
            return self._policy
        return ALLOWLIST if self._members.listed(channel) else PAIRING

    def allowed(self, msg: InboundMessage) -> bool:
        # A scheduled follow-up runs as its owner, checked when it fires: an owner removed
        # from allow_from since it was set must not keep costing turns.
        if self.is_admin(msg):
            return True
        policy = self.policy(msg.key.channel)
        return policy == OPEN or self._members.admits(msg, approved=policy == PAIRING)

    async def still_allowed(self, key: ChatKey, user_id: str) -> bool:
        """Whether ``user_id`` may use the bot in ``key`` now, by the store's approvals
        of this moment (a reminder they set fires only while they may)."""
        owner = InboundMessage(key, user_id, "")
        await self.refresh(owner)
        return self.allowed(owner)

    def may_answer(self, msg: InboundMessage) -> bool:
        """Whether a notice (the rate limit's) to ``msg``'s sender is welcome: only to
        those the bot answers. A stranger in a group would show it to everyone, and one in
        a direct message was told "I'll answer again then", which only a code follows."""
        return self.allowed(msg)

    async def refresh(self, msg: InboundMessage) -> None:
        """Re-read what the store says about the sender (approvals, bound usernames)."""
        policy = self.policy(msg.key.channel)
        if policy != OPEN and not self.is_admin(msg):
            await self._members.refresh(msg, approvals=policy == PAIRING)

    def refreshing(self, put: PutInbound) -> PutInbound:
        """``put`` preceded by :meth:`refresh`: the journal screen then judges ``msg``
        by today's approvals, not by those known when the daemon started."""

        async def put_refreshed(msg: InboundMessage) -> None:
            await self.refresh(msg)
            await put(msg)

        return put_refreshed

    async def __call__(self, msg: InboundMessage) -> bool:
        await self.refresh(msg)
        if self.allowed(msg):
            return True
        policy = self.policy(msg.key.channel)
        log.info(
            "message from %s (%s) refused (%s policy of channels.%s)",
            msg.sender,
            msg.user_name or "-",
            policy,
            msg.key.channel,
        )
        if policy == PAIRING and self._pairing is not None:
            await self._offer_pairing(msg, self._pairing)
        elif msg.direct or msg.kind is MessageKind.SCHEDULED:
            # A stranger in a group is ignored (the notice showed everyone there their id
            # and the config key); a follow-up whose owner was taken off the list tells
            # that owner once, in the chat they set it in.
            await self._tell_once(
                msg,
                msg.sender,
                "This bot only answers approved users. Ask its admin to add "
                f"'{msg.user_id}' to channels.{msg.key.channel}.allow_from.",
            )
        return False

    async def _offer_pairing(self, msg: InboundMessage, pairing: Pairing) -> None:
        if not msg.direct:
            return  # strangers in groups are ignored: no code where others read along
        issued = await pairing.issue(msg)
        if issued.request is None:
            hold = issued.hold
            once = f"{msg.sender}#{hold.reason}@{hold.until}" if hold else f"{msg.sender}#held"
            await self._tell_once(msg, once, _held_text(hold))
            return
        code = issued.request.code
        if not issued.new and not self._code_due(msg.sender, code):
            return  # said lately: a flood of messages gets the code once, not once each
        hint = self._hints.get(msg.key.channel)
        await self._notice(
            msg,
            "This bot only answers approved users. Your pairing code is "
            f"{code} (valid for {_minutes(pairing)} minutes): ask the bot's admin to "
            f"approve it with /approve {code} (or `bot pairing approve {code}`)."
            + (f" {hint}" if hint else ""),
        )
        self._codes_said[msg.sender] = (code, self._clock())

    def _code_due(self, sender: str, code: str) -> bool:
        """Whether ``code``, pending for ``sender``, may be said again: not said to them
        (since the daemon started), or last said over :data:`CODE_AGAIN_S` ago."""
        said = self._codes_said.get(sender)
        return said is None or said[0] != code or self._clock() - said[1] >= CODE_AGAIN_S

    async def _tell_once(self, msg: InboundMessage, key: str, text: str) -> None:
        if key not in self._told:
            await self._notice(msg, text)
            self._told[key] = None  # only once the notice is queued: a failure retries

    async def _notice(self, msg: InboundMessage, text: str) -> None:
        await self._bus.put_outbound(OutboundMessage.reply(msg, text, OutboundKind.NOTICE))


def _minutes(pairing: Pairing) -> int:
    return round(pairing.ttl.total_seconds() / 60)


def _held_text(hold: PairingHold | None) -> str:
    after = f"after {hold.until:%Y-%m-%d %H:%M} UTC" if hold else "later"
    if hold is not None and hold.reason == DENIED:
        return f"An admin declined your access request. You can ask again {after}."
    return (
        "This bot only answers approved users, and it has too many open access requests "
        f"right now. Please try again {after}."
    )


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


class BlankGuard:
    """Skips a message with nothing to read and no attachment (only spaces, zero-width
    characters, a Hangul filler...): silently, as it asks nothing, and before it costs
    a model call."""

    async def __call__(self, msg: InboundMessage) -> bool:
        if msg.attachments or not shows_nothing(msg.text):
            return True
        log.info("a blank message from %s in %s skipped", msg.sender, msg.key)
        return False
