"""Every bad input of the core issue: the user gets a reply or a clear error, and the
next message in the same chat still works."""

from __future__ import annotations

import logging

import pytest

from bot.agent.toolbox import ERROR_HINT
from bot.messages import ChatKey, OutboundKind
from tests.fakes.llm_server import FakeLLM
from tests.fakes.tools import TEST_TOOLS


async def _setup(daemon_factory, **kw):
    daemon, chat = await daemon_factory(**kw)
    for cls in TEST_TOOLS:
        daemon.tools.register(cls(), builtin=False)
    return daemon, chat


async def _next_message_works(chat, fake_llm: FakeLLM) -> None:
    reply = await chat.ask("are you still there?")
    assert reply.text == "echo: are you still there?"
    assert reply.kind is OutboundKind.REPLY


def _tool_result(fake_llm: FakeLLM) -> str:
    msgs = fake_llm.requests[-1].json["messages"]
    return next(m["content"] for m in reversed(msgs) if m["role"] == "tool")


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (("add_numbers", '{"a": 1, "b": '), "not valid JSON"),
        (("Add_Numbers", {"a": 1, "b": 2}), "Did you mean 'add_numbers'?"),
        (("add_numbrs", {"a": 1, "b": 2}), "tool 'add_numbrs' not found"),
        ((None, {"a": 1}), "no valid name"),
        (("add_numbers", {"a": "three", "b": 2}), "parameter 'a'"),
        (("explode", {}), "RuntimeError: boom"),
        (("polite_fail", {}), "the service said no"),
    ],
    ids=[
        "invalid-json",
        "fuzzy-hint",
        "unknown-tool",
        "null-name",
        "wrong-type",
        "tool-raises",
        "tool-error",
    ],
)
async def test_broken_tool_calls_become_error_results(daemon_factory, fake_llm, call, expected):
    _, chat = await _setup(daemon_factory)
    fake_llm.reply_tool_calls([call])
    fake_llm.reply_tool_calls([("final_result", {"answer": "handled"})])
    reply = await chat.ask("do the thing")
    assert reply.text == "handled"
    result = _tool_result(fake_llm)
    assert "\nError" in result
    assert expected in result
    assert result.endswith(ERROR_HINT)
    await _next_message_works(chat, fake_llm)


async def test_fuzzy_name_is_never_executed(daemon_factory, fake_llm):
    _, chat = await _setup(daemon_factory)
    fake_llm.reply_tool_calls([("Add-Numbers", {"a": 1, "b": 2})])
    fake_llm.reply_tool_calls([("final_result", {"answer": "ok"})])
    await chat.ask("add")
    result = _tool_result(fake_llm)
    assert "not found" in result
    assert "\n3" not in result


@pytest.mark.parametrize(
    "script",
    [
        lambda f: f.reply_error(status=500),
        lambda f: f.reply_error(status=429),
        lambda f: f.reply_text("too slow", delay=3.0),
        lambda f: f.reply_no_choices(),
    ],
    ids=["500", "429", "timeout", "no-choices"],
)
async def test_transient_provider_failures_are_retried(daemon_factory, fake_llm, script):
    _, chat = await _setup(daemon_factory, llm={"timeout_s": 1})
    script(fake_llm)
    reply = await chat.ask("hello")
    assert reply.text == "echo: hello"
    assert len(fake_llm.requests) == 2
    await _next_message_works(chat, fake_llm)


async def test_dead_provider_gives_clear_message_then_recovers(daemon_factory, fake_llm):
    _, chat = await _setup(daemon_factory, llm={"max_retries": 1, "fallback_models": ["openai/b"]})
    for _ in range(4):
        fake_llm.reply_error(status=503)
    reply = await chat.ask("hello?")
    assert reply.kind is OutboundKind.ERROR
    assert "unavailable" in reply.text
    assert [r.model for r in fake_llm.requests] == ["fake-model"] * 2 + ["b"] * 2
    # The unanswered message was kept: the next request carries it, merged with the new
    # one so that roles still alternate.
    reply = await chat.ask("are you still there?")
    assert (reply.kind, reply.text) == (OutboundKind.REPLY, "echo: hello?\n\nare you still there?")
    last = fake_llm.requests[-1].json["messages"][-1]["content"]
    assert last.startswith("hello?\n\nare you still there?\n\n[Runtime Context")


async def test_fallback_model_answers_when_primary_fails(daemon_factory, fake_llm):
    _, chat = await _setup(daemon_factory, llm={"max_retries": 0, "fallback_models": ["openai/b"]})
    fake_llm.reply_error(status=500)
    reply = await chat.ask("hi")
    assert reply.text == "echo: hi"
    assert [r.model for r in fake_llm.requests] == ["fake-model", "b"]


async def test_unconfigured_model_says_how_to_configure(daemon_factory, fake_llm, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    _, chat = await _setup(daemon_factory, llm={"api_base": "", "api_key": ""})
    reply = await chat.ask("hello")
    assert reply.kind is OutboundKind.ERROR
    assert "BOT_LLM__API_KEY" in reply.text
    assert "BOT_LLM__MODEL" in reply.text
    assert fake_llm.requests == []
    assert (await chat.ask("/help")).text.startswith("Commands")


async def test_a_message_answered_with_a_configuration_error_is_not_replayed(
    daemon_factory, fake_llm, monkeypatch
):
    """Once a key is set, the next turn holds only the new message: the one refused for
    want of credentials was not processed, and must not create a reminder after all."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    daemon, chat = await _setup(daemon_factory, llm={"api_key": ""})
    refused = await chat.ask("please remind me to stretch")
    assert refused.kind is OutboundKind.ERROR
    assert "No credentials" in refused.text and "not processed" in refused.text
    monkeypatch.setenv("OPENAI_API_KEY", "sk-now-configured")
    reply = await chat.ask("hello again")
    assert reply.text == "echo: hello again"
    [request] = fake_llm.requests
    sent = request.json["messages"]
    assert "stretch" not in str(sent)
    assert sent[-1]["content"].startswith("hello again\n\n[Runtime Context")
    stored = await daemon.sessions.history(ChatKey("test", "c1"))
    assert [m["content"] for m in stored if m["role"] == "user"] == ["hello again"]


async def test_plain_text_is_nudged_once_then_accepted(daemon_factory, fake_llm):
    _, chat = await _setup(daemon_factory)
    fake_llm.reply_text("first plain answer")
    fake_llm.reply_text("second plain answer")
    reply = await chat.ask("hi")
    assert reply.text == "second plain answer"
    nudge = fake_llm.requests[1].json["messages"][-1]
    assert nudge["role"] == "user" and "final_result" in nudge["content"]


async def test_plain_text_then_final_result_after_nudge(daemon_factory, fake_llm):
    _, chat = await _setup(daemon_factory)
    fake_llm.reply_text("plain")
    fake_llm.reply_tool_calls([("final_result", {"answer": "structured"})])
    assert (await chat.ask("hi")).text == "structured"


async def test_invalid_final_result_gets_one_retry(daemon_factory, fake_llm):
    _, chat = await _setup(daemon_factory)
    fake_llm.reply_tool_calls([("final_result", {"answer": "x", "structured_data": "nope"})])
    fake_llm.reply_tool_calls([("final_result", {"answer": "fixed", "structured_data": {"k": 1}})])
    reply = await chat.ask("hi")
    assert reply.text == "fixed"
    assert reply.extras["structured_data"] == {"k": 1}
    assert "parameter 'structured_data'" in _tool_result(fake_llm)


async def test_invalid_final_result_twice_falls_back(daemon_factory, fake_llm, caplog):
    _, chat = await _setup(daemon_factory)
    bad = {"answer": "the answer", "structured_data": 5}
    fake_llm.reply_tool_calls([("final_result", bad)])
    fake_llm.reply_tool_calls([("final_result", bad)])
    with caplog.at_level(logging.WARNING):
        reply = await chat.ask("hi")
    assert reply.text == "the answer"
    assert "structured_data" not in reply.extras
    assert len(fake_llm.requests) == 2
    assert any("final_result invalid twice" in r.message for r in caplog.records)
    await _next_message_works(chat, fake_llm)


async def test_a_blank_answer_is_asked_again_and_never_left_unsaid(daemon_factory, fake_llm):
    """Spaces and line breaks pass the schema's minLength but show nothing (a platform
    drops an empty message): the model is asked again, and a second blank one gets the
    apology, so the person always sees a reply."""
    from tools.final_result import BLANK

    _, chat = await _setup(daemon_factory)
    fake_llm.reply_tool_calls([("final_result", {"answer": " \n \n"})])
    fake_llm.reply_tool_calls([("final_result", {"answer": "here it is"})])
    assert (await chat.ask("hi")).text == "here it is"
    assert BLANK in _tool_result(fake_llm)
    fake_llm.reply_tool_calls([("final_result", {"answer": "  "})])
    fake_llm.reply_tool_calls([("final_result", {"answer": "\n"})])
    reply = await chat.ask("again")
    assert reply.text == "Sorry, I could not put my answer together. Please try again."


async def test_max_steps_gives_fallback_answer(daemon_factory, fake_llm):
    _, chat = await _setup(daemon_factory, llm={"max_steps": 3})
    for _ in range(3):
        fake_llm.reply_tool_calls([("add_numbers", {"a": 1, "b": 1})], content="still working")
    reply = await chat.ask("loop forever")
    assert "3 steps" in reply.text
    assert "still working" in reply.text
    assert len(fake_llm.requests) == 3
    await _next_message_works(chat, fake_llm)


async def test_turn_that_raises_apologizes_with_error_id(daemon_factory, fake_llm, caplog):
    daemon, chat = await _setup(daemon_factory)
    original = daemon.runner.run_turn
    calls = {"n": 0}

    async def flaky(msg, *args):
        calls["n"] += 1
        if calls["n"] == 1:
            raise ValueError("bug in a turn")
        return await original(msg, *args)

    daemon.runner.run_turn = flaky  # type: ignore[method-assign]
    with caplog.at_level(logging.ERROR):
        reply = await chat.ask("first")
    assert reply.kind is OutboundKind.ERROR
    error_id = reply.text.split("error id ")[1].split(")")[0]
    logged = [r for r in caplog.records if error_id in r.getMessage()]
    assert logged and logged[0].exc_info is not None
    await _next_message_works(chat, fake_llm)


async def test_oversize_message_is_refused_clearly(daemon_factory, fake_llm):
    _, chat = await _setup(daemon_factory, agent={"max_message_chars": 1000})
    reply = await chat.ask("x" * 1001)
    assert "1,001 characters" in reply.text and "1,000" in reply.text
    assert fake_llm.requests == []
    await _next_message_works(chat, fake_llm)


async def test_duplicate_message_is_answered_once(daemon_factory, fake_llm):
    _, chat = await _setup(daemon_factory)
    first = await chat.say("hi", message_id="m-1")
    await chat.say("hi", message_id="m-1")
    await chat.reply(first)
    await _next_message_works(chat, fake_llm)
    assert len(chat.replies_to(first)) == 1
    assert len(fake_llm.requests) == 2


async def test_unicode_text_survives_round_trip(daemon_factory, fake_llm):
    _, chat = await _setup(daemon_factory)
    text = "שלום 👋🏽 zero\u200bwidth \u202eRTL 漢字"
    reply = await chat.ask(text)
    assert reply.text == f"echo: {text}"


async def test_unreachable_model_server_says_what_to_check(daemon_factory, unused_tcp_port):
    _, chat = await _setup(
        daemon_factory,
        llm={"api_base": f"http://127.0.0.1:{unused_tcp_port}/v1", "max_retries": 0},
    )
    reply = await chat.ask("hello")
    assert reply.kind is OutboundKind.ERROR
    assert "unavailable" in reply.text and "BOT_LLM__API_BASE" in reply.text
