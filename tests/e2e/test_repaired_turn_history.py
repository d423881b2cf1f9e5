"""A turn answered through a repaired call keeps its exchange in the next turn's history.

Models send calls in forms the daemon repairs (arguments encoded twice, wrapped in
{"arguments": ...}, values of the wrong type, empty, plain text before the call...). The
answer goes out either way; these drive the NEXT turn through the daemon, litellm and a
strict fake provider, and check what the model then receives: turn 1's user message, its
assistant call(s) and their results, and turn 2's message on its own (merged with the
old one, the model would answer the old question again)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.agent.context import SentForms
from bot.agent.governor.budget import Budget
from bot.agent.governor.pipeline import ContextGovernor
from bot.agent.history import SentTails
from bot.config import ContextSettings
from tests.fakes.llm_server import FINAL_RESULT, FakeLLM, RecordedRequest
from tests.fakes.tools import TEST_TOOLS

ANSWER = {"answer": "one answered"}
ONE, TWO = "turn-1 question", "turn-2 question"


def _double(args: dict[str, Any]) -> str:
    return json.dumps(json.dumps(args))


# Each: the replies of turn 1, the answer the user gets, the tools whose calls turn 2 must see.
FAULTS: dict[str, tuple[list[list[tuple[str, Any]] | str], str, list[str]]] = {
    "double-encoded": ([[(FINAL_RESULT, _double(ANSWER))]], "one answered", [FINAL_RESULT]),
    "double-encoded-tool": (
        [[("lookup_city", _double({"city": "Oslo"}))], [(FINAL_RESULT, ANSWER)]],
        "one answered",
        ["lookup_city", FINAL_RESULT],
    ),
    "wrapped": ([[(FINAL_RESULT, {"arguments": ANSWER})]], "one answered", [FINAL_RESULT]),
    "wrapped-string": (
        [[(FINAL_RESULT, {"arguments": json.dumps(ANSWER)})]],
        "one answered",
        [FINAL_RESULT],
    ),
    "wrong-types": (
        [[(FINAL_RESULT, {**ANSWER, "structured_data": '{"n": 1}', "next_actions": '["a"]'})]],
        "one answered",
        [FINAL_RESULT],
    ),
    "empty-arguments": (
        [[("polite_fail", "")], [(FINAL_RESULT, ANSWER)]],
        "one answered",
        ["polite_fail", FINAL_RESULT],
    ),
    "null-arguments": (
        [[("polite_fail", "null")], [(FINAL_RESULT, ANSWER)]],
        "one answered",
        ["polite_fail", FINAL_RESULT],
    ),
    "text-instead-of-call": (
        ["one answered, in plain text", [(FINAL_RESULT, ANSWER)]],
        "one answered",
        [FINAL_RESULT],
    ),
    "invalid-then-valid": (
        [[(FINAL_RESULT, {"answr": "typo"})], [(FINAL_RESULT, ANSWER)]],
        "one answered",
        [FINAL_RESULT],
    ),
    "invalid-twice": (
        [[(FINAL_RESULT, '{"answer": "one answ')], [(FINAL_RESULT, '{"answer": "one answ')]],
        "Sorry, I could not put my answer together.",
        [],
    ),
}


def _script(fake: FakeLLM, replies: list[list[tuple[str, Any]] | str]) -> None:
    for reply in replies:
        if isinstance(reply, str):
            fake.reply_text(reply)
        else:
            fake.reply_tool_calls(reply)


def _turn_requests(fake: FakeLLM) -> list[RecordedRequest]:
    return [r for r in fake.requests if r.json.get("tools")]  # not the background folds


@pytest.mark.parametrize("fault", list(FAULTS), ids=list(FAULTS))
async def test_the_next_turn_sees_the_repaired_turn(daemon_factory, fake_llm, fault):
    replies, answer, tools = FAULTS[fault]
    daemon, chat = await daemon_factory()
    for cls in TEST_TOOLS:
        daemon.tools.register(cls(), builtin=False)
    fake_llm.strict = fake_llm.alternating = True
    _script(fake_llm, replies)
    assert (await chat.ask(ONE)).text.startswith(answer)
    assert (await chat.ask(TWO)).text == f"echo: {TWO}"
    assert fake_llm.rejected == []

    sent = _turn_requests(fake_llm)[-1].json["messages"][1:]
    users = [m["content"] for m in sent if m["role"] == "user"]
    assert users[0] == ONE  # on its own: not merged with the new question
    assert users[-1].startswith(f"{TWO}\n\n[Runtime Context")
    exchange = sent[1:-1]
    assert exchange, "turn 1's exchange is missing"
    assert all(m["role"] in ("assistant", "tool") for m in exchange)
    called = [c["function"]["name"] for m in exchange for c in m.get("tool_calls") or ()]
    assert called[-len(tools) :] == tools if tools else True
    results = [m for m in exchange if m["role"] == "tool"]
    assert len(results) == len(called)
    for m in exchange:
        for c in m.get("tool_calls") or ():
            assert isinstance(json.loads(c["function"]["arguments"]), dict)
    if fault != "invalid-twice":
        assert any(
            json.loads(c["function"]["arguments"]).get("answer") == "one answered"
            or json.loads(c["function"]["arguments"]).get("arguments")
            for m in exchange
            for c in m.get("tool_calls") or ()
            if c["function"]["name"] == FINAL_RESULT
        )
    texts = [m.get("content") or "" for m in exchange if m["role"] == "assistant"]
    tool_args = [c["function"]["arguments"] for m in exchange for c in m.get("tool_calls") or ()]
    assert any(answer in t for t in texts + tool_args)  # the answer the user saw


def test_a_stored_call_encoded_twice_keeps_the_history_clean() -> None:
    """Its sent form is repaired once, when the row is first seen: the request then
    goes out untouched, without the repair steps' walk over the whole history."""
    call = {"id": "c1", "type": "function", "function": {"name": FINAL_RESULT}}
    call["function"]["arguments"] = _double(ANSWER)
    rows = [
        (1, {"role": "user", "content": ONE}),
        (2, {"role": "assistant", "content": None, "tool_calls": [call]}),
        (3, {"role": "tool", "tool_call_id": "c1", "content": "Answer delivered."}),
    ]
    settings = ContextSettings(max_context_tokens=100_000, reserve_tokens=0)
    history = SentTails(SentForms(settings.max_tool_result_chars)).history("s", rows, 0)
    assert history.checked.walk is not None  # clean
    sent = history.messages[1]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(sent) == ANSWER
    assert rows[1][1]["tool_calls"][0]["function"]["arguments"] == _double(ANSWER)  # stored as is
    request = [
        {"role": "system", "content": "s"},
        *history.messages,
        {"role": "user", "content": TWO},
    ]
    governor = ContextGovernor(settings, budget=Budget(100_000, 0, "config"))
    governed = governor.prepare_for_model(request, turn_start=4, history=history.checked)
    assert governed.untouched
