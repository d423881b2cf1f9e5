"""A message the model's provider refuses (HTTP 400, or its content filter) is not kept:
stored unanswered, it was merged into every later request, so each was refused the same
way and the chat answered nothing more until /new."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.messages import ChatKey
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.llm_server import default_responder, error_reply

TRIGGER = "Zq-forbidden-phrase"
BODIES = {
    "bad request": {"error": {"message": "Invalid content", "type": "invalid_request_error"}},
    "content filter": {
        "error": {
            "message": "Your request was rejected as a result of our safety system.",
            "type": "invalid_request_error",
            "code": "content_policy_violation",
        }
    },
}


def _sent(request: Any) -> str:
    payload = request if isinstance(request, dict) else request.json
    return json.dumps(payload["messages"], ensure_ascii=False)


@pytest.mark.parametrize("refusal", sorted(BODIES))
async def test_a_refused_message_does_not_travel_with_the_next(
    daemon_factory, fake_llm, refusal: str
) -> None:
    """Like a content filter, the fake refuses any request holding the phrase."""
    daemon, chat = await daemon_factory()

    def filtering(request: Any) -> Any:
        if TRIGGER in _sent(request):
            return error_reply(400, BODIES[refusal])
        return default_responder(request)

    fake_llm.default = filtering
    refused = await chat.ask(f"tell me about {TRIGGER}")
    assert "refused" in refused.text and "a little while" not in refused.text, refused.text
    assert "not kept" in refused.text, refused.text
    assert len(fake_llm.requests) == 1  # refused: not sent again unchanged
    answered = await chat.ask("what's the weather like?")
    assert answered.text == "echo: what's the weather like?", answered.text
    assert TRIGGER not in _sent(fake_llm.requests[-1])
    key = ChatKey(chat.name, "c1")
    stored = json.dumps(await daemon.sessions.history(key), ensure_ascii=False)
    assert TRIGGER not in stored and "what's the weather like?" in stored


async def test_an_outage_keeps_the_message_for_the_next_turn(daemon_factory, fake_llm) -> None:
    """The other side of it: a message that met an outage (HTTP 500) is kept, and the
    next request carries it (the model answers both)."""
    _daemon, chat = await daemon_factory(llm={"max_retries": 0})
    fake_llm.default = lambda request: error_reply(500)
    failed = await chat.ask("first words")
    assert "a little while" in failed.text, failed.text
    fake_llm.default = default_responder
    await chat.ask("second words")
    assert "first words" in _sent(fake_llm.requests[-1])


REMIND = ("create_reminder", {"content": "call mom", "time": "in 2 hours"})


async def test_an_outage_after_a_tool_acted_says_what_was_done(daemon_factory, fake_llm) -> None:
    """A reminder created, then the model down: told only "try again", the person asked
    again and got a second reminder. The reply names it, and the message stays saved
    with the call, so the next request carries both (in a history a strict provider
    takes)."""
    daemon, chat = await daemon_factory(llm={"max_retries": 0})
    fake_llm.strict = fake_llm.alternating = True
    fake_llm.reply_tool_calls([REMIND]).reply_error(500)
    failed = await chat.ask("remind me to call mom in 2 hours")
    assert "a little while" in failed.text, failed.text
    assert "Before the error I had already:\n- create_reminder: Created #1 " in failed.text
    assert "call mom\nThat stays done: no need to ask for it again." in failed.text
    await chat.ask("did you set it?")
    sent = _sent(fake_llm.requests[-1])
    assert "remind me to call mom" in sent and "Created #1" in sent
    assert fake_llm.rejected == []
    reminders = await daemon.reminders.list(chat.name, "u1")
    assert [r.content for r in reminders] == ["call mom"]


async def test_a_refusal_after_a_tool_acted_says_what_was_done(daemon_factory, fake_llm) -> None:
    """Refused after the reminder was made: the message is still not kept (its words
    would be refused again), and the reply says the reminder stays, with no note of it."""
    daemon, chat = await daemon_factory()
    fake_llm.strict = fake_llm.alternating = True
    fake_llm.reply_tool_calls([REMIND]).reply_error(400, BODIES["bad request"])
    refused = await chat.ask(f"remind me to call mom, {TRIGGER}")
    assert "refused" in refused.text and "not kept" in refused.text, refused.text
    assert "Before the error I had already:\n- create_reminder: Created #1 " in refused.text
    assert "That stays done, though our chat keeps no note of it" in refused.text
    answered = await chat.ask("what's the weather like?")
    assert answered.text == "echo: what's the weather like?", answered.text
    assert TRIGGER not in _sent(fake_llm.requests[-1]) and fake_llm.rejected == []
    reminders = await daemon.reminders.list(chat.name, "u1")
    assert [r.content for r in reminders] == ["call mom"]


async def test_a_rejected_key_is_named_as_the_provider_s_variable(daemon_factory) -> None:
    """Anthropic refusing the key: the reply named OPENAI_API_KEY whatever the provider."""
    async with FakeAnthropic() as fake:
        fake.key = "sk-ant-the-right-one"
        llm = {"model": "anthropic/claude-sonnet-4-5", "api_base": fake.root}
        _daemon, chat = await daemon_factory(llm=llm)
        refused = await chat.ask("hi")
    assert "refused this bot's credentials" in refused.text, refused.text
    assert "ANTHROPIC_API_KEY" in refused.text and "OPENAI" not in refused.text
