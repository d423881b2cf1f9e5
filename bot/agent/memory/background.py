"""Folding old turns (summary + facts) in the background, after the reply.

The runner calls :meth:`Consolidator.after_turn` when a turn ends; the fold runs as a
task, so the reply never waits for it and the chat's next turn does not either (it
simply sends a few more turns whole until the fold lands). One fold per chat at a
time. A fold that fails (the model errs, or answers garbage) is recorded and its cursor
advances past those turns anyway, so nothing is retried in a loop. The stored history
is only read, never changed.

Where a fold's user facts are shown depends on the chat it folds (see
:mod:`bot.agent.memory.service`): a user's one-to-one chat teaches facts that follow
them, a group's stay in that group. The channel says which (``direct`` on a person's
message); a batch of turns none of which says so (follow-ups only) is folded as a group.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bot.agent.governor.pipeline import ContextGovernor
from bot.agent.governor.summary import Message, Row, plan_window, unsummarized
from bot.agent.memory.consolidate import consolidate
from bot.agent.memory.service import MemoryService
from bot.errors import FencedOff, StoreUnavailable
from bot.messages import ChatKey
from bot.store.base import Sessions
from bot.store.memory import Fact, Forgotten, chat_owner, user_owner

if TYPE_CHECKING:
    from bot.agent.llm.response import ChatModel

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Pending:
    """The unsummarized history a turn started from, as the runner sent it: after
    summary cursor ``through``, its ``rows``, the ``turns`` they hold and their summed
    length ``bound`` (the runner carries these from turn to turn: the fold check then
    reads no row)."""

    through: int
    rows: int
    turns: int
    bound: int | None  # None: not summed yet


@dataclass(frozen=True, slots=True)
class FinishedTurn:
    user_id: str
    user_row: int  # the stored row of the turn's user message
    before: Sequence[Row]  # the stored rows the turn started from
    # The length bound of the turn's first request when the governor sent it untouched:
    # it holds the unsummarized rows of ``before`` (plus the prompt), so it bounds them.
    request_bound: int | None = None
    history: Pending | None = None  # what the runner knew of ``before``
    direct: bool = False  # a person's message in their one-to-one chat (InboundMessage)


class Consolidator:
    def __init__(
        self,
        model: ChatModel,
        sessions: Sessions,
        governor: ContextGovernor,
        *,
        keep_turns: int,
        history_limit: int,
        memory: MemoryService | None = None,
    ) -> None:
        self._model = model
        self._sessions = sessions
        self._governor = governor
        self._keep = keep_turns
        self._limit = history_limit
        # Rows the history may reach unsummarized even while it fits the budget: the
        # turns load only the newest ``history_limit`` rows, so a fold must land before
        # older unsummarized rows drop out of that window. The last quarter is headroom
        # for the turns that come in while the fold runs (a turn of 8 tool steps adds
        # about 30 rows); a half wasted 50 rows and made paid folds of histories that
        # fit (a 40-turn chat of short messages folded at its 34th turn).
        self._max_rows = history_limit - history_limit // 4
        self._memory = memory
        self._running: dict[ChatKey, asyncio.Task[None]] = {}
        self._pending: dict[ChatKey, list[FinishedTurn]] = {}

    def after_turn(
        self,
        key: ChatKey,
        workspace: str,
        user_id: str,
        user_row: int,
        *,
        turns_after: Sequence[Row] = (),
        request_bound: int | None = None,
        history: Pending | None = None,
        direct: bool = False,
    ) -> None:
        """Queue the turn whose user message is row ``user_row``; ``turns_after``: the
        rows the turn started from, which tell whether a fold can be due at all, and
        ``request_bound`` (see :class:`FinishedTurn`) often tells it uncounted. Starts
        this chat's task unless it runs already (it then takes the queued turns when its
        fold is done); ``direct``: the turn's message came from a one-to-one chat. Never
        waits."""
        finished = FinishedTurn(user_id, user_row, turns_after, request_bound, history, direct)
        self._pending.setdefault(key, []).append(finished)
        if key in self._running:
            return
        task = asyncio.create_task(self._drain(key, workspace), name=f"consolidate {key}")
        self._running[key] = task
        task.add_done_callback(lambda _t: self._running.pop(key, None))

    async def idle(self) -> None:
        """Wait until no fold is running (tests; a graceful stop)."""
        while self._running:
            await asyncio.gather(*self._running.values(), return_exceptions=True)

    async def close(self) -> None:
        for task in list(self._running.values()):
            task.cancel()
        await asyncio.gather(*self._running.values(), return_exceptions=True)
        self._pending.clear()

    async def _drain(self, key: ChatKey, workspace: str) -> None:
        """One fold check per batch of finished turns, until no new turn came in."""
        while self._pending.get(key):
            finished = self._pending.pop(key)
            try:
                await self._note_speakers(key, finished)
                if await self._may_fold(key, finished[-1]):
                    await self.run(key, workspace, private=any(t.direct for t in finished))
            except asyncio.CancelledError:
                raise
            except FencedOff:  # the chat moved to another replica: its fold runs there
                log.info("consolidation in %s left to the replica now running it", key)
                self._pending.pop(key, None)
                return
            except StoreUnavailable as exc:  # no bug: the next turn's check folds
                log.warning("consolidation in %s skipped: %s", key, exc)
            except Exception:  # a background job must never take the chat down with it
                log.exception("consolidation in %s crashed", key)

    async def _note_speakers(self, key: ChatKey, finished: Sequence[FinishedTurn]) -> None:
        if self._memory is None:
            return
        for turn in finished:
            await self._memory.store.note_speaker(key, turn.user_row, turn.user_id)

    async def _may_fold(self, key: ChatKey, turn: FinishedTurn) -> bool:
        """Whether a fold can be due, from the rows a turn started from (plus itself):
        most turns fall short of the batch, or their history plainly fits (its length
        bound, which the turn's own request often gave already), and skip reading and
        counting the history again. A fold made due by the turn's own messages alone is
        noticed one turn later."""
        stored = await self._sessions.summary(key)  # cached by the store: no query
        through = stored[1] if stored is not None else 0
        known = turn.history
        pending: Sequence[Message] = ()  # counted here only when the runner's count is stale
        if known is None or known.through != through:  # not told, or a fold moved the cursor
            pending = unsummarized(turn.before, through)
            turns = sum(1 for m in pending if m.get("role") == "user")  # each starts one
            known = Pending(through, len(pending), turns, None)
        if known.turns + 1 < 2 * self._keep:
            return False
        if known.rows > self._max_rows:
            return True
        await self._governor.ready()
        half = self._half_budget()
        if turn.request_bound is not None and turn.request_bound <= half:
            return False
        bound = known.bound
        if bound is None:
            bound = self._governor.upper.messages(pending)
        return bound > half

    def _half_budget(self) -> int:
        return self._governor.current_budget().limit // 2

    async def run(self, key: ChatKey, workspace: str, *, private: bool = False) -> bool:
        """Fold what is due now; True when a fold (successful or not) advanced the cursor.
        ``private``: ``key`` is a one-to-one chat (its user facts follow the user)."""
        rows = await self._sessions.history_rows(key, self._limit)
        stored = await self._sessions.summary(key)
        previous, through = stored if stored is not None else (None, 0)
        window = plan_window(rows, through, self._keep, fits=await self._fits(rows, through))
        if not window.archive:
            return False
        first = window.archive[0][0]
        speakers = await self._speakers(key, window.archive)
        known = await self._known(workspace, key, speakers, private)
        forgotten = await self._forgotten(workspace, key, speakers)
        try:
            result = await consolidate(
                self._model,
                previous or None,
                _labelled(window.archive, speakers),
                known,
                sorted(set(speakers.values())),
                forgotten=[f.text for f in forgotten],
            )
        except Exception as exc:  # model error or garbage: record, advance, never loop
            log.warning("consolidation of older turns failed in %s: %s", key, exc)
            if self._memory is not None:
                await self._memory.store.record_failure(
                    workspace, key, first, window.through_id, f"{type(exc).__name__}: {exc}"
                )
            await self._sessions.save_summary(key, previous or "", window.through_id)
            return True
        if self._memory is not None and self._memory.enabled:
            await self._memory.apply(
                workspace, key, result.ops, private=private, forgotten=forgotten
            )
        await self._sessions.save_summary(key, result.summary, window.through_id)
        log.info(
            "folded %d messages of %s (%d fact ops)", len(window.archive), key, len(result.ops)
        )
        return True

    async def _fits(self, rows: Sequence[Row], through: int) -> bool:
        """Whether the unsummarized turns can all go whole: under half the budget (the
        rest is for the persona, tools and the turn) and well inside the loaded rows."""
        pending = unsummarized(rows, through)
        if len(pending) > self._max_rows:
            return False
        await self._governor.ready()
        return self._governor.counter.messages(pending) <= self._half_budget()

    async def _speakers(self, key: ChatKey, archive: Sequence[Row]) -> dict[int, str]:
        if self._memory is None:
            return {}
        return await self._memory.store.speakers(key, archive[0][0], archive[-1][0])

    async def _forgotten(
        self, workspace: str, key: ChatKey, speakers: dict[int, str]
    ) -> list[Forgotten]:
        if self._memory is None or not self._memory.enabled:
            return []
        return await self._memory.forgotten(workspace, key, list(speakers.values()))

    async def _known(
        self, workspace: str, key: ChatKey, speakers: dict[int, str], private: bool
    ) -> list[Fact]:
        """What the fold may see and change: in a group, what the group taught (its
        facts, its members' kept there), never a member's facts from elsewhere; in a
        one-to-one chat, its facts and its user's (those that follow them included)."""
        if self._memory is None or not self._memory.enabled:
            return []
        store = self._memory.store
        people = set(speakers.values())
        if not private or len(people) != 1:
            return await store.learned_in(workspace, chat_owner(key))
        owner = user_owner(key.channel, next(iter(people)))
        user, chat = await store.facts_of_both(workspace, owner, chat_owner(key))
        return [*chat, *user]


def _labelled(archive: Sequence[Row], speakers: dict[int, str]) -> list[dict[str, Any]]:
    out = []
    for row_id, message in archive:
        speaker = speakers.get(row_id)
        out.append({**message, "speaker": speaker} if speaker else message)
    return out
