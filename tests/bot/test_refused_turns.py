"""A message the model's provider refuses (HTTP 400, or its content filter) is not kept:
stored unanswered, it was merged into every later request, so each was refused the same
way and the chat answered nothing more until /new."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.messages import ChatKey
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
