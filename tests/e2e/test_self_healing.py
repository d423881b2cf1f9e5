"""Self-healing sessions, end to end: a stored history that a strict provider rejects still
answers the next message (and the ones after it) through the real daemon, litellm and the
fake server in strict mode, with no clean-up by hand and the stored rows left as they were.
Also: tool-result offload, archived summaries, and the persona surviving every cut."""

from __future__ import annotations

import logging
from typing import Any, ClassVar

import litellm
import pytest

from bot.agent.context import build_messages
from bot.agent.governor.offload import RESULTS_DIR
from bot.agent.llm.client import LLMClient
from bot.agent.memory.consolidate import CONSOLIDATION_INSTRUCTIONS as FOLD_INSTRUCTIONS
from bot.agent.toolbox import ToolContext
from bot.errors import ModelUnavailableError
from bot.messages import ChatKey, OutboundKind
from tests.fakes.llm_server import (
    FakeLLM,
    RecordedRequest,
    default_responder,
    error_reply,
    text_reply,
)
from tests.fakes.provider_rules import violations
from tests.fakes.tools import TEST_TOOLS
from tools.base import Tool

KEY = ChatKey("test", "c1", None)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def said(text: str | None) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def asked(call_id: str, name: Any = "lookup_city", args: Any = '{"city": "Oslo"}') -> dict:
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def result(call_id: str, content: str = "Oslo has 700k people") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "name": "lookup_city", "content": content}


CORRUPTIONS: dict[str, list[dict[str, Any]]] = {
    "orphan-result": [user("earlier"), result("ghost"), said("fine")],
    "call-without-result": [user("earlier"), asked("lost"), said("interrupted")],
    "non-string-name": [user("earlier"), asked("nameless", name=None), result("nameless")],
    "int-name": [user("earlier"), asked("int", name=42), result("int"), said("ok")],
    "result-not-after-call": [user("earlier"), asked("late"), said("meanwhile"), result("late")],
    "bad-arguments": [user("earlier"), asked("junk", args='{"city": "Os'), result("junk")],
    "placeholder": [user("earlier"), said(""), said("[previous assistant message omitted]")],
}
CORRUPTIONS["all-at-once"] = [m for msgs in CORRUPTIONS.values() for m in msgs]


def _is_summary_payload(payload: Any) -> bool:
    return not payload.get("tools") and payload["messages"][0]["content"] == FOLD_INSTRUCTIONS


def _is_summary(request: RecordedRequest) -> bool:
    return _is_summary_payload(request.json)


@pytest.mark.parametrize("corruption", list(CORRUPTIONS), ids=list(CORRUPTIONS))
async def test_strict_fake_rejects_each_corruption_when_sent_raw(fake_llm, corruption):
    """The control: without the governor, each of these histories gets a 400."""
    fake_llm.strict = True
    raw = build_messages("system", CORRUPTIONS[corruption], "hello")
    assert violations(raw)
    client = LLMClient("openai/fake-model", api_base=fake_llm.url, api_key="sk", max_retries=0)
    with pytest.raises(ModelUnavailableError, match="bad request"):
        await client.complete(raw, None)
    assert fake_llm.rejected


@pytest.mark.parametrize("corruption", list(CORRUPTIONS), ids=list(CORRUPTIONS))
async def test_corrupted_session_heals_itself(daemon_factory, fake_llm, corruption):
    daemon, chat = await daemon_factory()
    for cls in TEST_TOOLS:
        daemon.tools.register(cls(), builtin=False)
    fake_llm.strict = True
    await daemon.sessions.append(KEY, CORRUPTIONS[corruption])
    before = await daemon.sessions.raw_rows(KEY)

    reply = await chat.ask("hello")
    # Where the repairs leave "earlier" unanswered, it is merged with "hello" (roles alternate).
    assert reply.kind == OutboundKind.REPLY
    assert reply.text.startswith("echo: ") and reply.text.endswith("hello")
    sent = [m.get("content") or "" for m in fake_llm.requests[-1].json["messages"][1:]]
    assert any(c.startswith("earlier") for c in sent)

    # Later turns too, one with a tool step (the governor runs before every model call).
    fake_llm.reply_tool_calls([("lookup_city", {"city": "Paris"})])
    fake_llm.reply_tool_calls([("final_result", {"answer": "Paris it is"})])
    assert (await chat.ask("and Paris?")).text == "Paris it is"
    assert (await chat.ask("still there?")).text == "echo: still there?"
    assert fake_llm.rejected == []

    after = await daemon.sessions.raw_rows(KEY)
    assert after[: len(before)] == before  # repairs happened on copies only
    assert len(after) > len(before)


BIG = "START " + "x" * 50_000 + " END"


class BigOutput(Tool):
    name = "big_output"
    description = "Returns a very long text."
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}
    read_only = True
    _plugin_discoverable = False

    async def execute(self, ctx: ToolContext, *args: Any, **kwargs: Any) -> str:
        return BIG


class BigExempt(BigOutput):
    name = "big_exempt"
    offload_exempt = True


LONE = "\ud800"  # what json.loads makes of "\\ud800"; UTF-8 cannot encode it


class SurrogateOutput(BigOutput):
    name = "surrogate_output"

    async def execute(self, ctx: ToolContext, *args: Any, **kwargs: Any) -> str:
        return f"short {LONE} text" if kwargs.get("short") else f"{BIG}{LONE}"


async def test_big_tool_result_is_offloaded_before_it_is_stored(daemon_factory, fake_llm):
    daemon, chat = await daemon_factory(context={"max_tool_result_chars": 4_000})
    daemon.tools.register(BigOutput(), builtin=False)
    daemon.tools.register(BigExempt(), builtin=False)
    fake_llm.reply_tool_calls([("big_output", {}), ("big_exempt", {})])
    fake_llm.reply_tool_calls([("final_result", {"answer": "read it"})])
    assert (await chat.ask("read the big thing")).text == "read it"

    stored = {m.get("name"): m["content"] for m in await daemon.sessions.history(KEY)}
    files = list((daemon.workspaces.path() / RESULTS_DIR).glob("*.txt"))
    assert len(files) == 1
    assert files[0].read_text(encoding="utf-8") == BIG
    offloaded = stored["big_output"]
    assert str(files[0].resolve()) in offloaded
    assert "START" in offloaded and offloaded.endswith(" END")
    assert len(offloaded) < 4_000
    assert len(stored["big_exempt"]) > 50_000  # exempt: stored whole
    sent = [m["content"] for m in fake_llm.requests[-1].json["messages"] if m["role"] == "tool"]
    assert len(sent[0]) <= 4_000  # the offloaded one's excerpt
    assert sent[1].endswith(BIG)  # exempt: the budget step does not cut it either

    await daemon.sessions.clear(KEY)
    assert not files[0].exists()


async def test_older_turns_become_an_archived_summary(daemon_factory, fake_llm, caplog):
    daemon, chat = await daemon_factory(
        context={"history_turns": 2, "max_context_tokens": 4_000, "reserve_tokens": 200}
    )
    words = " words" * 300  # each turn ~300 tokens: four of them overflow half the budget
    fake_llm.default = lambda payload: (
        text_reply('{"summary": "They discussed fact 1 and fact 2.", "facts": []}')
        if _is_summary_payload(payload)
        else default_responder(payload)
    )
    for i in range(1, 4):
        await chat.ask(f"fact {i}{words}")
        await daemon.runner.consolidator.idle()
    assert not any(_is_summary(r) for r in fake_llm.requests)

    await chat.ask(f"fact 4{words}")  # 4 unsummarized turns, over the budget: 2 fold
    await daemon.runner.consolidator.idle()  # ... after the reply, in the background
    summaries = [r for r in fake_llm.requests if _is_summary(r)]
    assert len(summaries) == 1
    assert "fact 1" in summaries[0].json["messages"][1]["content"]
    await chat.ask("fact 5")
    main = fake_llm.requests[-1].json["messages"]
    assert "# Archived summary of earlier conversation" in main[0]["content"]
    assert "They discussed fact 1" in main[0]["content"]
    assert next(m["content"] for m in main[1:] if m["role"] == "user").startswith("fact 3")

    await daemon.runner.consolidator.idle()  # 3 unsummarized turns: the summary is reused
    assert sum(_is_summary(r) for r in fake_llm.requests) == 1

    fake_llm.default = lambda payload: (
        error_reply(400) if _is_summary_payload(payload) else default_responder(payload)
    )
    with caplog.at_level(logging.WARNING, logger="bot.agent.memory.background"):
        for i in range(6, 8):
            reply = await chat.ask(f"fact {i}{words}")
            assert reply.text.startswith(f"echo: fact {i}")  # the turns still answer
            await daemon.runner.consolidator.idle()
    assert "consolidation of older turns failed" in caplog.text
    assert sum(_is_summary(r) for r in fake_llm.requests) == 2  # failed once, not retried
    await chat.ask("fact 8")
    assert "They discussed fact 1" in fake_llm.requests[-1].json["messages"][0]["content"]


async def test_persona_survives_every_cut_and_requests_fit_the_window(
    daemon_factory, fake_llm, monkeypatch
):
    daemon, chat = await daemon_factory(
        context={"max_context_tokens": 2_000, "reserve_tokens": 500, "history_turns": 50}
    )
    fake_llm.strict = True
    (daemon.workspaces.path() / "SOUL.md").write_text("You are Pip, a cheerful otter.\n")
    for i in range(20):
        await daemon.sessions.append(KEY, [user(f"question {i} " + "words " * 300), said("ok")])
    for text in ("first", "second"):
        assert (await chat.ask(text)).text == f"echo: {text}"
        body = fake_llm.requests[-1].json
        assert "You are Pip, a cheerful otter." in body["messages"][0]["content"]
        assert body["messages"][-1]["content"].startswith(f"{text}\n\n[Runtime Context")
        # litellm's own count (the daemon turns its counter off: bot/agent/llm/loader.py)
        monkeypatch.setattr(litellm, "disable_token_counter", False)
        sent = litellm.token_counter(model="openai/fake-model", messages=body["messages"])
        assert sent <= 1_500
        assert len(body["messages"]) < 20  # old turns were snipped ...
    assert len(await daemon.sessions.history(KEY)) == 46  # ... from the copy only


async def test_strict_fake_server_answers_legal_requests(fake_llm: FakeLLM) -> None:
    fake_llm.strict = True
    client = LLMClient("openai/fake-model", api_base=fake_llm.url, api_key="sk", max_retries=0)
    resp = await client.complete([user("hi")], None)
    assert resp.content == "echo: hi"


async def test_a_failed_call_does_not_leave_two_user_messages_in_a_row(daemon_factory, fake_llm):
    """After a failed model call the user's message is stored unanswered; a template that
    demands alternating roles must still get a legal request for the next message."""
    daemon, chat = await daemon_factory()
    fake_llm.strict = True
    fake_llm.alternating = True
    fake_llm.reply_error(500).reply_error(500)  # max_retries=1: both attempts fail
    assert "unavailable" in (await chat.ask("first try")).text
    assert (await chat.ask("second try")).text == "echo: first try\n\nsecond try"
    assert fake_llm.rejected == []
    sent = fake_llm.requests[-1].json["messages"]
    assert [m["role"] for m in sent] == ["system", "user"]
    assert sent[1]["content"].startswith("first try\n\nsecond try\n\n[Runtime Context")
    stored = [m["content"] for m in await daemon.sessions.history(KEY) if m["role"] == "user"]
    assert stored == ["first try", "second try"]  # the store keeps both, verbatim


async def test_lone_surrogates_in_tool_output_do_not_kill_the_turn(daemon_factory, fake_llm):
    daemon, chat = await daemon_factory(context={"max_tool_result_chars": 4_000})
    daemon.tools.register(SurrogateOutput(), builtin=False)
    fake_llm.reply_tool_calls([("surrogate_output", {}), ("surrogate_output", {"short": True})])
    fake_llm.reply_tool_calls([("final_result", {"answer": "survived"})])
    assert (await chat.ask("read it")).text == "survived"
    tools = [m["content"] for m in await daemon.sessions.history(KEY) if m["role"] == "tool"]
    assert "short \ufffd text" in tools[1]
    assert not any(LONE in t for t in tools)
    (offloaded,) = (daemon.workspaces.path() / RESULTS_DIR).glob("*.txt")
    assert offloaded.read_text(encoding="utf-8").endswith(" END\ufffd")
