"""The background fold on its own: it never holds up the caller, takes turns that finish
while it runs, and a failure advances the cursor so the same turns are never retried."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from bot.agent.governor.budget import Budget, TokenCounter
from bot.agent.governor.pipeline import ContextGovernor
from bot.agent.llm.client import LLMResponse
from bot.agent.memory.background import Consolidator, Pending
from bot.agent.memory.service import MemoryService
from bot.config import ContextSettings
from bot.messages import ChatKey
from bot.store.db import Database
from bot.store.memory import MemoryStore
from bot.store.sessions import SessionStore, TurnStart

KEY = ChatKey("telegram", "-100")
LONG = "x" * 600  # ~200 tokens: four turns overflow half of a 1,000-token budget


class GatedModel:
    """Answers a fold once ``gate`` is set; ``fail`` makes it raise instead."""

    def __init__(self, fail: bool = False) -> None:
        self.gate = asyncio.Event()
        self.called = asyncio.Event()
        self.calls: list[list[dict[str, Any]]] = []
        self.fail = fail

    async def complete(self, messages: list[dict[str, Any]], tools: Any) -> LLMResponse:
        self.calls.append(messages)
        self.called.set()
        await self.gate.wait()
        if self.fail:
            raise RuntimeError("provider down")
        body = {
            "summary": "A long talk.",
            "facts": [{"op": "add", "about": "user", "user": "u1", "fact": "u1 likes long talks"}],
        }
        return LLMResponse(content=json.dumps(body), tool_calls=(), model="m", finish_reason="stop")


def consolidator(
    db: Database, model: GatedModel
) -> tuple[Consolidator, SessionStore, MemoryService]:
    sessions = SessionStore(db)
    memory = MemoryService(MemoryStore(db))
    settings = ContextSettings(max_context_tokens=1_000, reserve_tokens=0, history_turns=2)
    governor = ContextGovernor(settings, counter=TokenCounter(), budget=Budget(1_000, 0, "config"))
    c = Consolidator(model, sessions, governor, keep_turns=2, history_limit=200, memory=memory)
    return c, sessions, memory


async def turn(sessions: SessionStore, n: int) -> TurnStart:
    start = await sessions.begin_turn(KEY, f"m{n}", {"role": "user", "content": f"{n} {LONG}"})
    await sessions.append(KEY, [{"role": "assistant", "content": f"answer {n}"}])
    return start


async def test_the_caller_never_waits_and_late_turns_are_taken_after(db: Database) -> None:
    model = GatedModel()
    c, sessions, memory = consolidator(db, model)
    for n in range(4):
        last = await turn(sessions, n)
    # Returns at once; the fold is a task.
    c.after_turn(KEY, "default", "u1", last.user_row, turns_after=last.before)
    await asyncio.wait_for(model.called.wait(), 5)
    last = await turn(sessions, 4)
    # The fold is still waiting on the model.
    c.after_turn(KEY, "default", "u2", last.user_row, turns_after=last.before)
    assert len(model.calls) == 1
    model.gate.set()
    await asyncio.wait_for(c.idle(), 5)
    assert len(model.calls) == 1  # after the fold, 3 turns remain: nothing more to fold
    speakers = await memory.store.speakers(KEY, 0, 10_000)
    assert sorted(speakers.values()) == ["u1", "u2"]
    stored = await sessions.summary(KEY)
    assert stored is not None and stored[0] == "A long talk."
    rows = await sessions.history_rows(KEY)
    assert stored[1] == rows[3][0]  # the first two turns (4 rows) were folded
    assert len(rows) == 10  # the history itself is untouched


async def test_a_failure_is_recorded_and_the_same_turns_are_not_retried(db: Database) -> None:
    model = GatedModel(fail=True)
    model.gate.set()
    c, sessions, memory = consolidator(db, model)
    for n in range(4):
        await turn(sessions, n)
    assert await c.run(KEY, "default")
    assert not await c.run(KEY, "default")  # the cursor moved: nothing is due any more
    assert len(model.calls) == 1
    [failure] = await memory.store.failures("default")
    assert failure.error == "RuntimeError: provider down"
    stored = await sessions.summary(KEY)
    assert stored is not None and stored[0] == "" and stored[1] == failure.through_id


async def test_a_first_request_within_half_the_budget_spares_the_count(db: Database) -> None:
    """The turn's first request held every unsummarized row, so a bound of it within
    half the budget answers "no fold" without counting the rows again; over half, the
    rows are counted as before."""
    model = GatedModel()
    model.gate.set()
    c, sessions, _ = consolidator(db, model)
    for n in range(4):
        last = await turn(sessions, n)
    # An impossibly small bound (these rows alone overflow half the budget) shows that
    # nothing was counted: no fold.
    c.after_turn(KEY, "default", "u1", last.user_row, turns_after=last.before, request_bound=10)
    await asyncio.wait_for(c.idle(), 5)
    assert model.calls == []
    c.after_turn(KEY, "default", "u1", last.user_row, turns_after=last.before, request_bound=900)
    await asyncio.wait_for(c.idle(), 5)
    assert len(model.calls) == 1  # counted: the rows overflow half, a fold ran


async def test_a_history_that_fits_folds_only_past_three_quarters_of_the_window(
    db: Database,
) -> None:
    """Short turns fit the budget however many there are; what forces a fold is the
    loaded window (``history_limit`` rows): unsummarized rows must never drop out of it,
    so a fold starts once they pass three quarters of it, and not before (a fold is a
    paid call, and a summary says less than the turns themselves)."""
    model = GatedModel()
    model.gate.set()
    sessions = SessionStore(db)
    settings = ContextSettings(max_context_tokens=100_000, reserve_tokens=0, history_turns=2)
    budget = Budget(100_000, 0, "config")
    governor = ContextGovernor(settings, counter=TokenCounter(), budget=budget)
    c = Consolidator(model, sessions, governor, keep_turns=2, history_limit=40)

    async def short_turn(n: int) -> TurnStart:
        start = await sessions.begin_turn(KEY, f"s{n}", {"role": "user", "content": f"hi {n}"})
        await sessions.append(KEY, [{"role": "assistant", "content": f"hello {n}"}])
        return start

    for n in range(15):  # 30 rows: three quarters of 40, not past them
        last = await short_turn(n)
        c.after_turn(KEY, "default", "u1", last.user_row, turns_after=last.before)
        await asyncio.wait_for(c.idle(), 5)
    assert model.calls == []
    assert not await c.run(KEY, "default")
    last = await short_turn(15)  # the turn started from 30 rows; its own make 32
    c.after_turn(KEY, "default", "u1", last.user_row, turns_after=last.before)
    await asyncio.wait_for(c.idle(), 5)
    last = await short_turn(16)  # started from 32 rows: past three quarters
    c.after_turn(KEY, "default", "u1", last.user_row, turns_after=last.before)
    await asyncio.wait_for(c.idle(), 5)
    assert len(model.calls) == 1
    stored = await sessions.summary(KEY)
    assert stored is not None and stored[0] == "A long talk."


async def test_the_runners_count_of_the_history_decides_while_its_cursor_holds(
    db: Database,
) -> None:
    """A turn hands over what the runner knew of its history (rows, turns, length
    bound, after which cursor); the check then reads no row. Told of another cursor (a
    fold landed since), it counts the rows themselves."""
    model = GatedModel()
    model.gate.set()
    c, sessions, _ = consolidator(db, model)
    last = await turn(sessions, 0)  # one short turn: nothing due by its rows
    small = Pending(through=0, rows=2, turns=1, bound=10)
    c.after_turn(KEY, "default", "u1", last.user_row, turns_after=last.before, history=small)
    await asyncio.wait_for(c.idle(), 5)
    assert model.calls == []
    for n in range(1, 4):
        last = await turn(sessions, n)
    # The rows overflow half the budget, but the runner's bound says they fit: trusted.
    told = Pending(through=0, rows=6, turns=3, bound=10)
    c.after_turn(KEY, "default", "u1", last.user_row, turns_after=last.before, history=told)
    await asyncio.wait_for(c.idle(), 5)
    assert model.calls == []
    # The same count for another cursor is not trusted: the rows are counted, a fold runs.
    stale = Pending(through=-1, rows=6, turns=3, bound=10)
    c.after_turn(KEY, "default", "u1", last.user_row, turns_after=last.before, history=stale)
    await asyncio.wait_for(c.idle(), 5)
    assert len(model.calls) == 1
