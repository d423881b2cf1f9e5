"""Streamed answers at unit level: the partial-JSON answer, tool calls assembled by index
from the real litellm's streamed chunks (fake SSE server), and one turn's preview pacing
against an in-memory preview channel."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any

import pytest

from bot.agent.llm.client import LLMClient
from bot.agent.llm.response import AnswerReader
from bot.agent.llm.stream import partial_answer
from bot.errors import PreviewRateLimited
from bot.messages import ChatKey
from bot.store.previews import PreviewRecord
from bot.streaming.pauses import ChatPauses
from bot.streaming.preview import PreviewPlan, PreviewStream
from tests.fakes.llm_server import FINAL_RESULT, FakeLLM, tool_calls_reply

KEY = ChatKey("fake", "1")
USER = [{"role": "user", "content": "hi"}]
ANSWER = 'café 😀 "quoted" \\ done'
# The arguments as a provider escapes them, cut inside \u00e9, between the two halves of
# a surrogate pair, inside \" and inside \\.
FRAGMENTS = (
    '{"ans',
    'wer": "caf',
    "\\u00",
    "e9 \\ud83d",
    '\\ude00 \\"q',
    "uoted\\",
    '" \\',
    '\\ done"}',
)


class Seen:
    """An AnswerSink that reads the answer at every growth."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.tools: list[tuple[str, ...]] = []

    def answer_grew(self, read: AnswerReader) -> None:
        self.texts.append(read())

    def tools_running(self, names: tuple[str, ...]) -> None:
        self.tools.append(names)


def test_partial_answer_is_the_last_complete_prefix() -> None:
    joined = ""
    for fragment in FRAGMENTS:
        joined += fragment
        text = partial_answer(joined.encode())
        assert ANSWER.startswith(text)
        text.encode("utf-8")  # no lone surrogate
    assert partial_answer(joined.encode()) == ANSWER
    assert partial_answer(b'{"answer": "caf\xc3') == "caf"  # a cut UTF-8 byte
    assert partial_answer(b"") == partial_answer(b"not json") == ""
    assert partial_answer(b'{"next_actions": ["a"], "answ') == ""


async def test_stream_assembles_calls_by_index_and_shows_only_the_answer(fake_llm: FakeLLM) -> None:
    reply = tool_calls_reply(
        [("get_weather", {"city": "Paris"}), (FINAL_RESULT, json.loads("".join(FRAGMENTS)))],
        content="thinking aloud",
    )
    raw_weather = json.dumps({"city": "Paris"})
    fragments = ((raw_weather[:5], raw_weather[5:]), FRAGMENTS)
    fake_llm.reply(reply.__class__(**{**_fields(reply), "fragments": fragments, "piece": 3}))
    llm = LLMClient("openai/fake-model", api_base=fake_llm.url, api_key="sk-test")
    seen = Seen()
    resp = await llm.stream([{"role": "user", "content": "hi"}], None, seen)
    assert fake_llm.requests[0].json["stream"] is True
    assert resp.content == "thinking aloud"  # kept for the turn, never shown
    assert [c.name for c in resp.tool_calls] == ["get_weather", FINAL_RESULT]
    assert json.loads(resp.tool_calls[0].arguments) == {"city": "Paris"}
    assert json.loads(resp.tool_calls[1].arguments)["answer"] == ANSWER
    assert seen.texts[-1] == ANSWER
    assert all(ANSWER.startswith(t) for t in seen.texts)
    assert len(set(seen.texts)) > 3  # it grew in steps


async def test_the_hang_guard_spares_a_long_steady_stream_and_cuts_a_stalled_one(
    fake_llm: FakeLLM,
) -> None:
    """The guard against hangs outside litellm's HTTP client (2 x timeout_s + 5 s by
    default) watches the gaps between chunks: an answer written steadily for longer than
    the guard is kept whole; a stream that stops sending is still cut off."""
    from bot.errors import ModelUnavailableError
    from tests.fakes.llm_server import streamed_answer

    llm = LLMClient("openai/fake-model", api_base=fake_llm.url, api_key="sk-test", max_retries=0)
    llm.hang_guard_s = 2.5  # the guard moves at most once a second: room on a busy machine
    answer = "A long answer, written steadily. " * 4
    fake_llm.reply(streamed_answer(answer, seconds=3.2))
    resp = await llm.stream([{"role": "user", "content": "hi"}], None, Seen())
    assert json.loads(resp.tool_calls[0].arguments)["answer"] == answer
    stalled = streamed_answer(answer, seconds=3.5)
    fake_llm.reply(replace(stalled, pace=4.5))  # the first chunk, then nothing for 4.5 s
    with pytest.raises(ModelUnavailableError):
        await llm.stream([{"role": "user", "content": "hi"}], None, Seen())


async def test_an_endless_stream_ends_at_its_bounds_with_the_answer_so_far(
    fake_llm: FakeLLM,
) -> None:
    """A model that writes for ever (in a loop, or behind a proxy that never sends the
    finish) is read up to ten times [agent] max_answer_chars, or for five hang guards:
    the answer so far, saying it was cut, rather than a turn that never ends. With no
    answer text to end on (another call's arguments) the call fails, not retried."""
    from bot.agent.llm.stream import StreamBounds
    from bot.errors import ModelUnavailableError
    from tests.fakes.llm_server import endless_answer

    llm = LLMClient(
        "openai/fake-model", api_base=fake_llm.url, api_key="sk-test", max_answer_chars=500
    )
    assert llm.stream_bounds == StreamBounds(5_000, (60 * 2 + 5) * 5)
    fake_llm.reply(endless_answer())
    resp = await llm.stream(USER, None, Seen())
    (call,) = resp.tool_calls
    answer = json.loads(call.arguments)["answer"]
    assert answer.startswith("la la ") and len(answer) < 5_100
    assert answer.endswith("\n\n… [The answer was cut here: it ran past 5,000 characters.]")

    llm.stream_bounds = StreamBounds(max_chars=10**9, seconds=2.0)
    fake_llm.reply(endless_answer(pace=0.05))
    resp = await llm.stream(USER, None, Seen())
    answer = json.loads(resp.tool_calls[0].arguments)["answer"]
    assert answer.endswith(
        "[The answer was cut here: the model was still writing after 2 seconds.]"
    )

    llm.stream_bounds = StreamBounds(max_chars=5_000, seconds=600)
    asked = len(fake_llm.requests)
    looping = tool_calls_reply([("get_weather", '{"city": "')])
    fake_llm.reply(replace(endless_answer(), body=looping.body))
    with pytest.raises(ModelUnavailableError, match="ran past its bounds"):
        await llm.stream(USER, None, Seen())
    assert len(fake_llm.requests) == asked + 1  # not tried again


def _fields(reply: Any) -> dict[str, Any]:
    return {name: getattr(reply, name) for name in reply.__dataclass_fields__}


class Chat:
    """An in-memory SupportsPreview: what the user sees, and every call made."""

    def __init__(self) -> None:
        self.messages: dict[str, str] = {}
        self.calls: list[tuple[str, str]] = []
        self.gate: asyncio.Event | None = None
        self.limited = 0

    def preview_limit(self, key: ChatKey) -> int:
        return 30

    def preview_interval(self, key: ChatKey, configured: float) -> float:
        return configured

    async def post_preview(self, key: ChatKey, text: str, reply_to: str | None) -> str:
        self.calls.append(("post", text))
        self.messages[str(len(self.messages) + 1)] = text
        return str(len(self.messages))

    async def edit_preview(self, key: ChatKey, message_id: str, text: str) -> None:
        self.calls.append(("edit", text))
        if self.gate is not None:
            await self.gate.wait()
        if self.limited:
            self.limited -= 1
            raise PreviewRateLimited("429", 60)
        self.messages[message_id] = text

    async def delete_preview(self, key: ChatKey, message_id: str) -> None:
        self.messages.pop(message_id, None)


class Ids:
    def __init__(self) -> None:
        self.rows: dict[str, tuple[str, bool]] = {}

    async def save(self, turn: str, key: ChatKey, message_id: str) -> None:
        self.rows[turn] = (message_id, False)

    async def get(self, turn: str) -> PreviewRecord | None:
        row = self.rows.get(turn)
        return PreviewRecord(*row) if row else None

    async def finalize(self, turn: str) -> None:
        self.rows[turn] = (self.rows[turn][0], True)

    async def prune(self, older_than: Any) -> int:
        return 0


def stream(chat: Chat, ids: Ids, pauses: ChatPauses | None = None, **kw: Any) -> PreviewStream:
    plan = PreviewPlan(KEY, None, interval=0.0, min_chars=5, limit=30, max_failures=3)
    return PreviewStream(chat, plan, turn="t", previews=ids, pauses=pauses or ChatPauses(), **kw)


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_status_line_then_answer_then_no_edit_after_finish() -> None:
    chat, ids = Chat(), Ids()
    preview = stream(chat, ids)
    preview.tools_running(("get_weather",))
    await _settle()
    assert chat.messages == {"1": "⏳ get weather…"}
    assert ids.rows == {"t": ("1", False)}  # saved before any edit
    preview.answer_grew(lambda: "It is sunny")
    chat.gate = asyncio.Event()
    await _settle()  # the edit is in flight, held
    preview.answer_grew(lambda: "It is sunny and warm")  # latest text: not queued
    finishing = asyncio.create_task(preview.finish())
    await _settle()
    assert not finishing.done()  # the final waits for the edit in flight
    chat.gate.set()
    assert await finishing == "1"
    assert ids.rows == {"t": ("1", True)}
    preview.answer_grew(lambda: "a late growth never shows")
    await _settle()
    assert chat.calls == [("post", "⏳ get weather…"), ("edit", "It is sunny")]


async def test_a_retry_overwrites_and_a_long_answer_is_cut_once() -> None:
    chat, ids = Chat(), Ids()
    preview = stream(chat, ids)
    preview.answer_grew(lambda: "a rejected answer")
    await _settle()
    preview.answer_grew(lambda: "the retried answer")
    await _settle()
    assert chat.messages == {"1": "the retried answer"}
    preview.answer_grew(lambda: "x" * 50)
    await _settle()
    preview.answer_grew(lambda: "x" * 60)
    await _settle()
    assert chat.messages == {"1": "x" * 30}
    assert len(chat.calls) == 3


async def test_a_status_line_or_a_half_answer_never_shrinks_to_a_fragment() -> None:
    """min_chars holds for a new answer replacing what is shown, not only for the first
    preview: the status line, or a cut stream's half answer, stays until it has them."""
    chat, ids = Chat(), Ids()
    preview = stream(chat, ids)
    preview.tools_running(("list_reminders",))
    await _settle()
    preview.answer_grew(lambda: "You")
    await _settle()
    assert chat.messages == {"1": "⏳ list reminders…"}
    preview.answer_grew(lambda: "You have none")
    await _settle()
    assert chat.messages == {"1": "You have none"}
    preview.answer_grew(lambda: "On")  # a retry after a cut stream
    await _settle()
    assert chat.messages == {"1": "You have none"}
    preview.answer_grew(lambda: "Once upon")
    await _settle()
    assert chat.calls == [
        ("post", "⏳ list reminders…"),
        ("edit", "You have none"),
        ("edit", "Once upon"),
    ]


async def test_rate_limit_pauses_the_chat_and_failures_end_previews() -> None:
    chat, ids, pauses = Chat(), Ids(), ChatPauses()
    preview = stream(chat, ids, pauses)
    preview.answer_grew(lambda: "first text")
    await _settle()
    chat.limited = 1
    preview.answer_grew(lambda: "second text")
    await _settle()
    assert pauses.until(KEY) > 0  # that chat paused for the retry_after
    preview.answer_grew(lambda: "third text")
    await _settle()
    assert len(chat.calls) == 2  # nothing while paused
    assert await preview.finish() == "1"


async def test_replayed_turn_adopts_the_saved_preview_or_keeps_hands_off() -> None:
    chat, ids = Chat(), Ids()
    chat.messages["7"] = "half an ans"
    preview = stream(chat, ids, record=PreviewRecord("7"))
    preview.answer_grew(lambda: "the whole answer now")
    await _settle()
    assert chat.calls == [("edit", "the whole answer now")]  # the same message, no post
    assert await preview.finish() == "7"
    done = stream(chat, ids, record=PreviewRecord("7", final=True))
    done.answer_grew(lambda: "replayed after the final was queued")
    await _settle()
    assert len(chat.calls) == 1 and await done.finish() == "7"


async def _taken_over() -> tuple[Chat, PreviewStream]:
    """A preview showing its first words, then its chat taken over by another replica
    (the lease moved on while this one was frozen), which finished the message."""
    chat, ids = Chat(), Ids()
    running = {KEY}
    preview = stream(chat, ids, runs=lambda key: key in running)
    preview.answer_grew(lambda: "the first words")
    await _settle()
    chat.messages["1"] = "the answer the new owner gave"
    running.clear()
    return chat, preview


async def test_a_replica_that_lost_the_chat_edits_its_preview_no_more() -> None:
    """Frozen past its lease and resumed, a replica's turn still holds its half answer:
    its next edit would land over the answer the replica that took the chat gave."""
    chat, preview = await _taken_over()
    preview.answer_grew(lambda: "the first words and a stale rest")
    await _settle()
    assert chat.messages == {"1": "the answer the new owner gave"}
    assert chat.calls == [("post", "the first words")]


async def test_a_replica_that_lost_the_chat_leaves_the_preview_to_its_new_owner() -> None:
    """Frozen past its lease and resumed, a replica's turn is fenced off and fails: its
    failure path deleted the preview message, which the replica that took the chat had
    adopted and finished, so the chat was left with no answer to that message."""
    chat, preview = await _taken_over()
    await preview.discard()
    assert chat.messages == {"1": "the answer the new owner gave"}


async def test_a_failed_turn_deletes_its_half_answer() -> None:
    chat, ids = Chat(), Ids()
    preview = stream(chat, ids)
    preview.answer_grew(lambda: "half of an answer")
    await _settle()
    assert chat.messages == {"1": "half of an answer"}
    await preview.discard()
    assert chat.messages == {}
