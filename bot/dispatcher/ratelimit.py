"""Rate limits: a token bucket per sender and one per chat, checked before anything
costs money.

A user may send ``burst`` messages at once, then one more every ``refill_s`` seconds.
A message over the limit is dropped before any model call; the sender is told once per
episode (the next accepted message ends it), so a flood gets one answer, not one each.
A chat (a group, all its threads) has a bucket of its own over all its members: twenty
accounts each within their own limit made 400 turns in one group, and the group's
admin's /new waited behind all of them. Over it a message is dropped the same way, and
the chat is told at most once per window (the time its bucket takes to fill again);
within it, no sender there is told of their own limit either (twenty raiders over theirs
were twenty notices in the group).
Admins and trusted local channels are not limited. A scheduled follow-up is a paid turn
like a message and spends a token of its owner's bucket: exempt, a self-re-arming one
made one message into dozens of model calls in seconds.

A message is charged at the moment it was sent (its ``received_at``, the platform's
time), not when its lane reaches it: what someone wrote slowly while the daemon was down
arrives all at once at the next start and is no flood, while a burst stays one however
late it is read. A message is charged once: a second look at it (a retried admission,
the same row queued again) gets the first answer.

A bare command for another bot in a group (``not_ours``) is not charged: a game with a
dice bot (/roll, /roll, ...) spent its players' tokens here, and the next question they
asked this bot was dropped with a notice in the group.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime

from bot.bus.base import Bus
from bot.lru import LRU
from bot.messages import (
    ChatKey,
    InboundMessage,
    MessageKind,
    OutboundKind,
    OutboundMessage,
    utcnow,
)

MAX_TRACKED = 10_000  # senders with a bucket; full buckets are forgotten past this
TOLD_KEPT = 10_000  # senders told about the limit and not heard from since
CHARGED_KEPT = 10_000  # messages charged lately, each with its verdict
CHATS_TOLD_KEPT = 10_000  # chats told about their limit lately, with when


class TokenBuckets:
    """One bucket per key; the clock is injected so tests never wait on real time."""

    def __init__(
        self, burst: int, refill_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.burst = burst
        self.refill_s = refill_s
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, as of)
        # Full buckets are forgotten once this many are kept; if the senders still
        # refilling leave more, the next look waits for twice as many (no scan per
        # message while a crowd of over MAX_TRACKED senders is active).
        self._prune_at = MAX_TRACKED

    def take(self, key: str, ago: float = 0.0) -> bool:
        """Spend one token of ``key``'s bucket for a message sent ``ago`` seconds before
        now; False when it was empty then. One sent before the bucket's last charge (read
        out of order) is charged as of that charge, never refilling the bucket backwards."""
        if self.refill_s <= 0:
            return True
        now = self.clock()
        at = now - max(0.0, ago)
        since = self._buckets.get(key, (0.0, at))[1]
        at = max(at, since)
        tokens = self._level(key, at)
        if tokens < 1:
            self._buckets[key] = (tokens, at)
            return False
        self._buckets[key] = (tokens - 1, at)
        if len(self._buckets) > self._prune_at:
            self._forget_full(now)
            self._prune_at = max(MAX_TRACKED, 2 * len(self._buckets))
        return True

    def _level(self, key: str, now: float) -> float:
        tokens, since = self._buckets.get(key, (float(self.burst), now))
        return min(float(self.burst), tokens + (now - since) / self.refill_s)

    def _forget_full(self, now: float) -> None:
        for key in [k for k in self._buckets if self._level(k, now) >= self.burst]:
            del self._buckets[key]


class RateLimit:
    """The dispatcher filter around :class:`TokenBuckets`."""

    def __init__(
        self,
        bus: Bus,
        buckets: TokenBuckets,
        *,
        exempt: Callable[[InboundMessage], bool],
        may_answer: Callable[[InboundMessage], bool],
        not_ours: Callable[[InboundMessage], bool] = lambda msg: False,
        wall: Callable[[], datetime] = utcnow,
        chats: TokenBuckets | None = None,
    ) -> None:
        """``chats``: the per-chat buckets (None: chats are not limited as a whole)."""
        self._bus = bus
        self._buckets = buckets
        self._chats = chats
        self._chats_told: LRU[str, float] = LRU(CHATS_TOLD_KEPT)  # chat -> when told
        self._exempt = exempt
        self._not_ours = not_ours  # another bot's command: silent, and free
        self._may_answer = may_answer
        self._wall = wall  # the clock ``received_at`` is on
        self._told: LRU[str, None] = LRU(TOLD_KEPT)
        self._charged: LRU[tuple[ChatKey, str], bool] = LRU(CHARGED_KEPT)

    async def __call__(self, msg: InboundMessage) -> bool:
        if self._exempt(msg) or self._not_ours(msg):
            return True
        mark = (msg.key, msg.message_id)
        verdict = self._charged.get(mark)
        if verdict is not None:
            return verdict  # charged (and told) already
        ago = (self._wall() - msg.received_at).total_seconds()
        self._charged[mark] = verdict = self._buckets.take(msg.sender, ago)
        chats = self._chats
        if (
            verdict
            and chats is not None
            and self._counts_for_chat(msg)
            and not chats.take(_chat_of(msg.key), ago)
        ):
            self._charged[mark] = False  # the sender's token stays spent: one in a burst
            await self._tell_chat(msg, chats)
            return False
        if verdict:
            self._told.pop(msg.sender)
            return True
        if msg.sender not in self._told and self._may_answer(msg) and not self._chat_told(msg):
            self._told[msg.sender] = None
            await self._bus.put_outbound(
                OutboundMessage.reply(msg, self._notice(msg), OutboundKind.NOTICE)
            )
        return False

    def _counts_for_chat(self, msg: InboundMessage) -> bool:
        """What a chat's bucket counts: a group member's own message the bot would answer.
        Not a stranger's (ignored in silence: counted, they would use up the group's
        share), not a direct chat's (its one person has their own bucket), not a
        scheduled follow-up (it spends its owner's tokens, and nobody asked for it)."""
        return not msg.direct and msg.kind is not MessageKind.SCHEDULED and self._may_answer(msg)

    def _chat_told(self, msg: InboundMessage) -> bool:
        """Whether ``msg``'s chat was told of its limit within the window."""
        told = self._chats_told.get(_chat_of(msg.key))
        chats = self._chats
        return (
            told is not None
            and chats is not None
            and chats.clock() - told < chats.burst * chats.refill_s
        )

    async def _tell_chat(self, msg: InboundMessage, chats: TokenBuckets) -> None:
        """Says once per window in the chat that messages are being skipped: a refill
        lets one through every few seconds, and a notice each time would be a flood."""
        if self._chat_told(msg) or not self._may_answer(msg):
            return
        self._chats_told[_chat_of(msg.key)] = chats.clock()
        wait = max(1, round(chats.burst * chats.refill_s / 60))
        text = (
            "Too many messages in this chat at once, so I skipped some of them, this one "
            f"too. Please ask again in {wait} minute{'s' if wait != 1 else ''}."
        )
        await self._bus.put_outbound(OutboundMessage.reply(msg, text, OutboundKind.NOTICE))

    def _notice(self, msg: InboundMessage) -> str:
        if msg.kind is MessageKind.SCHEDULED:
            return (
                "A scheduled follow-up was skipped: together with your messages it went "
                "over the rate limit of this bot."
            )
        wait = max(1, round(self._buckets.refill_s))
        return (
            "You are sending messages faster than I can take them, so I skipped "
            f"this one. Please wait {wait} seconds between messages for a moment; "
            "I'll answer again then."
        )


def _chat_of(key: ChatKey) -> str:
    """The chat a bucket is kept for: all threads of a channel or group share one."""
    return f"{key.channel}:{key.chat_id}"
