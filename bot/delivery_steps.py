"""What of one delivery already reached the chat, so that a retry sends only the rest.

A delivery is a few steps: its text (the channel resumes a long text's parts itself),
then each file, then the whole text as answer.md when it was capped. A failed step makes
the outbox retry the whole delivery; the steps done before it are skipped (their ids
kept for the ``Sent``), or every failed upload would post the answer's text again.

A delivery of more than one step keeps its progress in the state store while steps
remain, so a retry in the next process (after a restart, or on the replica that took
the chat) skips them too: one read at its first attempt here, a write after each step
that leaves more to do, a delete once the outbox has it marked sent (a process that dies
before that mark sends the delivery again: then only its last step). A delivery of its
text alone costs nothing: there a retry is the text's, whose parts the channel resumes.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable

from bot.lru import LRU
from bot.messages import OutboundMessage
from channels.base import IN_FLIGHT_KEEP, Sent, StateStore

log = logging.getLogger(__name__)

PREFIX = "delivery:steps:"
Done = dict[str, tuple[str, ...]]  # step name -> the platform ids it posted


class Steps:
    """The steps of one delivery done so far; ``step`` runs one unless it was done."""

    def __init__(
        self, done: Done | None = None, save: Callable[[Done], Awaitable[None]] | None = None
    ) -> None:
        self.done: Done = done or {}
        self.stored = bool(done)  # the state store holds a record to delete at the end
        self._save = save

    async def step(self, name: str, send: Callable[[], Awaitable[Sent]], *, last: bool) -> Sent:
        """``send`` once across attempts; its ids are recorded (durably unless ``last``:
        nothing follows it, and the delivery ends with it) before the next step runs."""
        ids = self.done.get(name)
        if ids is None:
            ids = self.done[name] = (await send()).ids
            if not last and self._save is not None:
                await self._save(self.done)
                self.stored = True
        return Sent(ids)


class DeliveryProgress:
    """Per delivery of several steps not yet through, its :class:`Steps`: in memory
    between attempts (the ``limit`` most recent), in ``state`` across processes."""

    def __init__(self, state: StateStore | None = None, *, limit: int = 1000) -> None:
        self._state = state
        self._open: LRU[str, Steps] = LRU(limit)

    async def of(self, msg: OutboundMessage, several: bool) -> Steps:
        """The steps of ``msg`` done so far. ``several``: it may have more than one
        step (files, or a text over the cap); else nothing is kept."""
        key = msg.delivery_key
        if not several:
            return Steps()
        steps = self._open.get(key)
        if steps is None:
            done = await self._load(key)
            steps = self._open[key] = Steps(done, lambda done: self._store(key, done))
        return steps

    async def forget(self, delivery_key: str) -> None:
        """The delivery is through (marked sent, or given up): its record goes. One that
        cannot be deleted now expires by itself (``IN_FLIGHT_KEEP``)."""
        steps = self._open.pop(delivery_key)
        if steps is None or not steps.stored or self._state is None:
            return
        try:
            await self._state.delete(PREFIX + delivery_key)
        except Exception:  # the delivery went out; an old record only costs a row
            log.exception("could not delete the progress of delivery %s", delivery_key)

    async def _load(self, key: str) -> Done:
        raw = await self._state.get(PREFIX + key) if self._state is not None else None
        if not raw:
            return {}
        try:
            found = json.loads(raw)
            return {str(name): tuple(str(i) for i in ids) for name, ids in found.items()}
        except (ValueError, TypeError, AttributeError):
            log.warning("progress of delivery %s unreadable; sending it whole", key)
            return {}

    async def _store(self, key: str, done: Done) -> None:
        if self._state is not None:
            value = json.dumps({name: list(ids) for name, ids in done.items()})
            await self._state.set(PREFIX + key, value, keep_for=IN_FLIGHT_KEEP)
