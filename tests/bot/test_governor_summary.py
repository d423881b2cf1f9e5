"""The archived summary: which turns fall out, the summary call, and its storage."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio
from hypothesis import given
from hypothesis import strategies as st

from bot.agent.governor.summary import (
    MAX_TRANSCRIPT_CHARS,
    plan_window,
    transcript,
    turns_of,
    unsummarized,
    unsummarized_rows,
)
from bot.messages import ChatKey
from bot.store.db import Database
from bot.store.sessions import SessionStore

KEY = ChatKey("telegram", "100")


def rows_for(turns: int, start_id: int = 1) -> list[tuple[int, dict[str, Any]]]:
    rows: list[tuple[int, dict[str, Any]]] = []
    next_id = start_id
    for t in range(turns):
        for msg in (
            {"role": "user", "content": f"u{t}"},
            {"role": "assistant", "content": f"a{t}"},
        ):
            rows.append((next_id, msg))
            next_id += 1
    return rows


@given(
    roles=st.lists(st.sampled_from(["user", "assistant", "tool", "system"]), max_size=40),
    through=st.integers(min_value=-1, max_value=42),
)
def test_the_one_pass_tail_is_what_the_turns_after_the_cursor_hold(roles, through):
    """unsummarized_rows (each turn's single pass over the tail) agrees with turns_of
    over the rows after the cursor, whatever the shape of the rows."""
    rows = [(i + 1, {"role": role, "content": f"m{i}"}) for i, role in enumerate(roles)]
    turns = turns_of([r for r in rows if r[0] > through])
    expected = [r for t in turns for r in t]
    assert unsummarized_rows(rows, through) == expected
    assert unsummarized(rows, through) == [m for _, m in expected]


def test_turns_start_at_user_messages_and_skip_a_cut_prefix():
    rows = [(1, {"role": "tool", "content": "x"}), (2, {"role": "assistant", "content": "y"})]
    rows += rows_for(2, start_id=3)
    assert [[i for i, _ in t] for t in turns_of(rows)] == [[3, 4], [5, 6]]


def test_nothing_is_folded_before_twice_the_window_piles_up():
    within = plan_window(rows_for(11), 0, keep_turns=6)  # 11 < 2 * 6
    assert within.archive == [] and within.through_id == 0

    over = plan_window(rows_for(12), 0, keep_turns=6)  # fold half: the oldest 6 turns
    assert [m["content"] for _, m in over.archive][:4] == ["u0", "a0", "u1", "a1"]
    assert len(over.archive) == 12 and over.through_id == 12
    assert unsummarized(rows_for(12), over.through_id)[0] == {"role": "user", "content": "u6"}


def test_nothing_is_folded_while_the_history_fits():
    assert plan_window(rows_for(40), 0, keep_turns=6, fits=True).archive == []


def test_window_counts_only_turns_after_the_summary():
    rows = rows_for(20)
    assert plan_window(rows, summarized_through=18, keep_turns=6).archive == []  # 11 turns
    window = plan_window(rows, summarized_through=16, keep_turns=6)  # 12 turns: 6 fold
    assert window.archive[0][1]["content"] == "u8" and window.through_id == 28
    assert unsummarized(rows, 16)[0]["content"] == "u8"


def test_a_fold_takes_only_what_one_transcript_holds():
    rows = [(i + 1, {"role": "user", "content": "x" * 600}) for i in range(200)]
    window = plan_window(rows, 0, keep_turns=6)
    assert 0 < len(window.archive) < 194
    assert len(transcript([m for _, m in window.archive])) <= MAX_TRANSCRIPT_CHARS


def test_transcript_is_bounded_and_names_tool_calls():
    msgs = [
        {"role": "user", "content": "q" * 5_000, "speaker": "u7"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "a", "function": {"name": "get_weather", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "a", "content": "sunny"},
    ]
    text = transcript(msgs)
    assert text.startswith("User u7: qqq")
    assert "[called tools: get_weather]" in text
    assert "Tool: sunny" in text
    assert len(text.splitlines()[0]) <= 700


@pytest_asyncio.fixture
async def store(tmp_path: Path) -> AsyncIterator[SessionStore]:
    db = Database(tmp_path / "bot.db")
    await db.open()
    yield SessionStore(db)
    await db.close()


async def test_summary_is_stored_per_session_and_replaced(store: SessionStore):
    assert await store.summary(KEY) is None
    await store.save_summary(KEY, "first", 4)
    await store.save_summary(KEY, "second", 9)
    assert await store.summary(KEY) == ("second", 9)
    assert await store.summary(ChatKey("telegram", "other")) is None


async def test_history_rows_carry_ids_in_order(store: SessionStore):
    await store.append(
        KEY, [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    )
    rows = await store.history_rows(KEY)
    assert [m["content"] for _, m in rows] == ["a", "b"]
    assert rows[0][0] < rows[1][0]
    assert [m for _, m in rows] == await store.history(KEY)
