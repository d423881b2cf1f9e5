"""Tool calls put back together from a streamed answer, in the shapes providers send
them through litellm: OpenAI's fragments (id and name first, then argument pieces at the
same index), and whole calls that all carry index 0 (Ollama's own API as litellm reads
it, and OpenAI-compatible servers such as Ollama's /v1)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from bot.agent.llm.client import LLMClient
from bot.agent.llm.response import AnswerReader
from bot.agent.llm.stream import AnswerStream
from tests.fakes.llm_server import FINAL_RESULT, FakeLLM, tool_calls_reply


class Shown:
    """An AnswerSink: the partial answer read at every growth."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def answer_grew(self, read: AnswerReader) -> None:
        self.texts.append(read())


def chunk(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"content": None, "tool_calls": list(calls)}}]}


def part(index: int, arguments: str, call_id: str | None = None, name: str | None = None) -> Any:
    """One tool-call fragment as litellm's ChatCompletionDeltaToolCall carries it."""
    function = {"name": name, "arguments": arguments}
    return {"id": call_id, "type": "function", "index": index, "function": function}


def assembled(*chunks: dict[str, Any], sink: Shown | None = None) -> list[tuple[Any, ...]]:
    stream = AnswerStream("m", sink)
    for one in chunks:
        stream.feed(one)
    return [(c.id, c.name, c.arguments) for c in stream.response().tool_calls]


def test_openai_fragments_at_their_index_make_one_call_each() -> None:
    calls = assembled(
        chunk(part(0, "", "call_a", "list_reminders")),
        chunk(part(0, "{")),
        chunk(part(0, "}")),
        chunk(part(1, "", "call_b", "remember")),
        chunk(part(1, '{"fact": ')),
        chunk(part(1, '"likes tea"}')),
    )
    assert calls == [
        ("call_a", "list_reminders", "{}"),
        ("call_b", "remember", '{"fact": "likes tea"}'),
    ]


def test_a_provider_repeating_id_and_name_on_every_fragment_stays_one_call() -> None:
    calls = assembled(
        chunk(part(0, '{"fact": ', "call_a", "remember")),
        chunk(part(0, '"likes tea"', "call_a", "remember")),
        chunk(part(0, "}", None, "remember")),
    )
    assert calls == [("call_a", "remember", '{"fact": "likes tea"}')]


def test_ollama_calls_each_in_its_own_chunk_all_at_index_0_stay_apart() -> None:
    """What litellm makes of Ollama's NDJSON (ollama_chat/llama3.1): each finished call in
    a chunk of its own, index 0, arguments as whole JSON, an id only when they are not
    empty. They were glued into one list_reminders call with '{}{"fact": ...}'."""
    shown = Shown()
    calls = assembled(
        chunk(part(0, "{}", None, "list_reminders")),
        chunk(part(0, '{"fact": "likes coffee"}', "4c559310", "remember")),
        chunk(part(0, '{"answer": "Noted."}', "da5b8e50", FINAL_RESULT)),
        sink=shown,
    )
    assert [c[1:] for c in calls] == [
        ("list_reminders", "{}"),
        ("remember", '{"fact": "likes coffee"}'),
        (FINAL_RESULT, '{"answer": "Noted."}'),
    ]
    assert calls[1][0] == "4c559310" and calls[0][0] != calls[1][0]
    assert shown.texts == ["Noted."]  # the preview reads the answer's own arguments


def test_ollama_calls_in_one_chunk_keep_litellms_indexes() -> None:
    calls = assembled(
        chunk(part(0, "{}", None, "list_reminders"), part(1, '{"fact": "x"}', "id2", "remember"))
    )
    assert [c[1:] for c in calls] == [("list_reminders", "{}"), ("remember", '{"fact": "x"}')]


def test_whole_calls_at_index_0_with_their_own_ids_stay_apart() -> None:
    """Ollama's /v1: two whole calls, both index 0, different ids."""
    calls = assembled(
        chunk(part(0, "{}", "call_0abc", "list_reminders")),
        chunk(part(0, '{"fact": "likes tea"}', "call_1abc", "remember")),
    )
    assert calls == [
        ("call_0abc", "list_reminders", "{}"),
        ("call_1abc", "remember", '{"fact": "likes tea"}'),
    ]


async def test_streamed_whole_calls_at_index_0_arrive_as_two_calls(fake_llm: FakeLLM) -> None:
    """The same shape over HTTP through the real litellm (openai/ provider)."""
    reply = tool_calls_reply([("list_reminders", {}), ("remember", {"fact": "likes tea"})])
    fake_llm.reply(replace(reply, whole_calls=True))
    llm = LLMClient("openai/llama3.1", api_base=fake_llm.url, api_key="sk-test")
    resp = await llm.stream([{"role": "user", "content": "hi"}], None, Shown())
    assert [(c.name, json.loads(c.arguments or "")) for c in resp.tool_calls] == [
        ("list_reminders", {}),
        ("remember", {"fact": "likes tea"}),
    ]
    assert len({c.id for c in resp.tool_calls}) == 2
