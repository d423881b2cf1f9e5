"""The :eyes: a user's message wears while the daemon answers it.

Added once a turn outlasts ``typing_after_s`` (the daemon's typing refresh asks for it
again and again: once per message is enough), removed when the answer is posted. The
answer may come from another process than the mark: a turn cut off by a stop or a crash
is run again by the next process, or by another replica that took its chat over, and an
answer a dead replica left queued is sent by the one after it. Its reaction must come
off too, or it stays on that message for good. So each mark is also kept in the
channel's state (shared by replicas) for a day, and an answer this process did not mark
looks there. Alone, only an answer to a message older than this process looks: a newer
one was marked here or not at all (most turns end before the signal), so steady state
costs no read. Among replicas (``shared``) another one may have marked any message, so
every answer not marked here looks: one key read per answer.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from bot.errors import DeliveryRejected
from bot.lru import LRU
from channels.base import StateStore
from channels.slack.send import SlackSender

log = logging.getLogger(__name__)

WORKING_EMOJI = "eyes"
KEEP = timedelta(days=1)  # a turn that long is over one way or another
WORN_KEPT = 1_024  # marks remembered here (a turn another replica answered never clears)

Target = tuple[str, str]  # (channel id, message ts)


class WorkingSignal:
    def __init__(
        self, sender: SlackSender, state: StateStore | None, *, shared: bool = False
    ) -> None:
        self._sender = sender
        self._state = state
        self._shared = shared  # replicas share the state: any of them may have marked
        self._worn: LRU[Target, None] = LRU(WORN_KEPT)  # messages this process marked
        self._since = time.time()

    async def show(self, target: Target) -> None:
        """:eyes: on ``target``, once."""
        if target in self._worn:
            return
        self._worn[target] = None
        try:
            # Kept before it is put on: a reaction no state knows of would stay if the
            # answer came from another process (and an answer sent while the state
            # write was still on its way would leave the mark behind).
            if self._state is not None:
                await self._state.set(_key(target), "1", keep_for=KEEP)
            await self._sender.reaction(True, *target, WORKING_EMOJI)
        except DeliveryRejected:
            raise  # e.g. no reactions:write scope: not asked again for this message
        except Exception:
            self._worn.pop(target)  # transient (Slack, the store): the next refresh retries
            raise

    async def clear(self, target: Target) -> None:
        """The answer to ``target`` is out: its :eyes: off, if this process or an
        earlier one put them there. Never raises: the answer must not be sent again
        over a reaction or a mark."""
        try:
            if target in self._worn:
                self._worn.pop(target)
            elif not await self._marked_elsewhere(target):
                return
            await self._sender.reaction(False, *target, WORKING_EMOJI)
            if self._state is not None:
                await self._state.delete(_key(target))
        except Exception as exc:  # cosmetic (a stale mark expires with its day): never fail a send
            log.info("slack: could not remove :%s: from %s: %s", WORKING_EMOJI, target, exc)

    async def _marked_elsewhere(self, target: Target) -> bool:
        """Marked by an earlier process or another replica (a turn run again here, an
        answer it left queued)."""
        if self._state is None:
            return False
        if not self._shared and not _older(target[1], self._since):
            return False
        return await self._state.get(_key(target)) is not None


def _key(target: Target) -> str:
    return f"slack:eyes:{target[0]}:{target[1]}"


def _older(ts: str, since: float) -> bool:
    try:
        return float(ts) < since
    except ValueError:
        return False
