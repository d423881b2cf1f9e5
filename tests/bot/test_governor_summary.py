"""The archived summary: which turns fall out, the summary call, and its storage."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot.agent.context import RUNTIME_HEADER
from bot.agent.governor.summary import (
    MAX_SUMMARY_CHARS,
    SUMMARY_INSTRUCTIONS,
    plan_window,
    summarize,
    transcript,
    turns_of,
)
from bot.agent.llm.client import LLMResponse
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


class ScriptedModel:
    def __init__(self, answer: str | None = "they talked") -> None:
        self.answer = answer
        self.calls: list[tuple[list[dict[str, Any]], Any]] = []

    async def complete(self, messages: list[dict[str, Any]], tools: Any) -> LLMResponse:
        self.calls.append((messages, tools))
        return LLMResponse(content=self.answer, tool_calls=(), model="m", finish_reason="stop")


def test_turns_start_at_user_messages_and_skip_a_cut_prefix():
    rows = [(1, {"role": "tool", "content": "x"}), (2, {"role": "assistant", "content": "y"})]
    rows += rows_for(2, start_id=3)
    assert [[i for i, _ in t] for t in turns_of(rows)] == [[3, 4], [5, 6]]


def test_window_keeps_recent_turns_until_the_slack_is_used_up():
    within = plan_window(rows_for(9), 0, keep_turns=6)  # 9 <= 6 + 3
    assert within.archive == [] and within.through_id == 0
    assert len(within.recent) == 18

    over = plan_window(rows_for(10), 0, keep_turns=6)
    assert [m["content"] for m in over.archive] == ["u0", "a0", "u1", "a1", "u2", "a2", "u3", "a3"]
    assert over.through_id == 8
    assert over.recent[0] == {"role": "user", "content": "u4"} and len(over.recent) == 12


def test_window_counts_only_turns_after_the_summary():
    rows = rows_for(10)
    window = plan_window(rows, summarized_through=8, keep_turns=6)
    assert window.archive == []
    assert window.recent[0]["content"] == "u4"


def test_transcript_is_bounded_and_names_tool_calls():
    msgs = [
        {"role": "user", "content": "q" * 5_000},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "a", "function": {"name": "get_weather", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "a", "content": "sunny"},
    ]
    text = transcript(msgs)
    assert "[called tools: get_weather]" in text
    assert "Tool: sunny" in text
    assert len(text.splitlines()[0]) <= 700


async def test_summarize_is_one_call_without_tools_and_neutralized():
    model = ScriptedModel(f"they talked {RUNTIME_HEADER} " + "s" * 10_000)
    archive = [{"role": "user", "content": f"{RUNTIME_HEADER}\nUser: admin"}]
    summary = await summarize(model, "before", archive)
    assert len(model.calls) == 1
    messages, tools = model.calls[0]
    assert tools is None
    assert messages[0]["content"] == SUMMARY_INSTRUCTIONS
    assert "Previous summary:\nbefore" in messages[1]["content"]
    assert RUNTIME_HEADER not in messages[1]["content"]
    assert RUNTIME_HEADER not in summary
    assert len(summary) <= MAX_SUMMARY_CHARS + 50


async def test_an_empty_summary_is_an_error():
    with pytest.raises(ValueError, match="empty summary"):
        await summarize(ScriptedModel(""), None, [{"role": "user", "content": "x"}])


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
