"""Parts a dead run may have posted: found in the channel's recent history, not posted twice.

A process killed between a post and its sent mark leaves the outbox row in doubt;
delivery names it at the next start (:class:`Doubts`, via ``SupportsLookup``). The
part's nonce cannot be looked up: Discord keeps it only ephemerally (it is in the
answer to the POST and in the gateway's MESSAGE_CREATE, never in ``GET
/channels/{id}/messages``: discord.py documents ``Message.nonce`` as "not stored long
term", discord.py issue #2451), and ``enforce_nonce`` deduplicates for a few minutes
only. So a part is matched by what the history does carry (:func:`is_part`): the bot as
author, the part's exact content, created no earlier than the row was queued (less
:data:`CLOCK_SKEW_S`), and for a first part that replies, no reply to another message.
The parts of one answer are matched in order, and a message is taken by one part of one
answer only (two answers in doubt with the same text are not both "found" in one post);
the read is bounded (:data:`LOOKUP_PAGES` pages of :data:`LOOKUP_LIMIT`, oldest first
after that time), and a part not found there is posted (still with its nonce).
What this cannot tell apart:
another answer with the very same words, not a reply, that was posted and marked sent in
that span (the same reminder text twice within seconds); it is taken for the one in doubt.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import aiohttp
import discord

from bot.errors import ChannelError

log = logging.getLogger(__name__)

LOOKUP_LIMIT = 100  # messages per history request (Discord's maximum)
LOOKUP_PAGES = 3  # requests per answer in doubt, at most
CLOCK_SKEW_S = 10.0  # Discord's clock (the message's snowflake) may lag ours this much
MAX_DOUBTS = 1000


class Doubts:
    """Deliveries a dead run was posting -> when their outbox row was queued (epoch s).
    Memory only: after another crash the outbox names them again."""

    def __init__(self) -> None:
        self._since: dict[str, float] = {}
        self.taken: set[int] = set()  # messages a lookup found (each stands for one part)

    def add(self, delivery_key: str, since: datetime) -> None:
        self._since[delivery_key] = since.timestamp()
        while len(self._since) > MAX_DOUBTS:
            self._since.pop(next(iter(self._since)))

    def since(self, delivery_key: str) -> float | None:
        return self._since.get(delivery_key)

    def settle(self, delivery_key: str) -> None:
        """Every part is out (found or posted): nothing left to look up."""
        self._since.pop(delivery_key, None)
        if not self._since:
            self.taken.clear()


def is_part(m: discord.Message, me: int, text: str, reply_to: int | None) -> bool:
    """Whether ``m`` is the bot's post of a part with content ``text`` (a reply to
    ``reply_to`` when given: a reply to another message is a different answer)."""
    if m.author.id != me or m.content.strip() != text.strip():
        return False
    replied = m.reference.message_id if m.reference is not None else None
    return replied is None or replied == reply_to


class LostParts:
    """One answer's parts looked for in one bounded, oldest-first read of the history
    after the time its row was queued; read lazily, as far as the parts need."""

    def __init__(
        self, channel: discord.PartialMessageable, me: int, doubts: Doubts, delivery_key: str
    ) -> None:
        since = doubts.since(delivery_key) or 0.0
        after = datetime.fromtimestamp(since - CLOCK_SKEW_S, UTC)
        self._history: AsyncIterator[discord.Message] = channel.history(
            limit=LOOKUP_LIMIT * LOOKUP_PAGES, after=after, oldest_first=True
        )
        self._me = me
        self._taken = doubts.taken
        self._key = delivery_key
        self._missed = False  # parts go out in order: after one missing, none is there

    async def find(self, index: int, text: str, reply_to: int | None) -> str | None:
        """The id of the message that is part ``index``, or None: post it."""
        while not self._missed:
            m = await self._next()
            if m is None:
                self._missed = True
                log.info("Discord post %s#%d had not arrived; posting it now", self._key, index)
            elif m.id not in self._taken and is_part(m, self._me, text, reply_to):
                self._taken.add(m.id)
                found = f"{self._key}#{index}"
                log.info("Discord post %s had arrived (id %s); not posted again", found, m.id)
                return str(m.id)
        return None

    async def _next(self) -> discord.Message | None:
        """The next message of the bounded read; None at its end, or when the bot may
        not read the history (Read Message History missing): then the part is posted."""
        try:
            return await anext(self._history)
        except StopAsyncIteration:
            return None
        except (discord.Forbidden, discord.NotFound) as exc:
            log.warning("Discord: cannot read the history to look %s up: %s", self._key, exc)
            return None
        except (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError) as exc:
            # Never posted blind: the part may be there; the outbox retries the lookup.
            raise ChannelError(f"Discord lookup of a post in doubt failed: {exc!r}") from exc
