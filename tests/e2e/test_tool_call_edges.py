"""Odd but legal tool calls, through the real daemon: half an emoji, two answers in one
response, an id no row can have, text that shows nothing, null for "not given"."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tests.fakes.llm_server import FakeLLM


def _tool_results(fake_llm: FakeLLM, request: int = -1) -> list[str]:
    """The tool results of the latest response the request ``request`` carries."""
    out: list[str] = []
    for message in reversed(fake_llm.requests[request].json["messages"]):
        if message["role"] == "assistant":
            break
        if message["role"] == "tool":
            out.append(message["content"])
    return out[::-1]


def _errors(caplog: Any) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


async def test_half_an_emoji_in_arguments_is_delivered_and_stored(daemon_factory, fake_llm, caplog):
    """A lone surrogate escape ("\\ud83d") in final_result's answer lost the whole reply
    (the outbox row could not be encoded), and in a reminder's text it came back as a
    UnicodeEncodeError: every string argument is made valid Unicode before any tool."""
    _, chat = await daemon_factory()
    fake_llm.reply_tool_calls(
        [("create_reminder", '{"content": "call mom \\ud83d", "time": "in 10 minutes"}')]
    )
    fake_llm.reply_tool_calls([("final_result", '{"answer": "Here is your plan \\ud83d"}')])
    with caplog.at_level(logging.WARNING):
        reply = await chat.ask("plan my day")
    assert reply.text == "Here is your plan \ufffd"
    (created,) = _tool_results(fake_llm)
    assert "Created" in created and "call mom \ufffd" in created
    assert not _errors(caplog)
    assert "call mom \ufffd" in (await chat.ask("/reminders")).text


async def test_half_an_emoji_in_an_answer_refused_twice_is_still_delivered(
    daemon_factory, fake_llm
):
    """The fallback after two invalid final_results says the model's own answer text,
    read from its raw arguments: made valid there too."""
    _, chat = await daemon_factory()
    bad = '{"answer": "the answer \\ud83d", "structured_data": 5}'
    fake_llm.reply_tool_calls([("final_result", bad)])
    fake_llm.reply_tool_calls([("final_result", bad)])
    assert (await chat.ask("hi")).text == "the answer \ufffd"


async def test_the_first_valid_of_two_answers_is_delivered_and_the_other_said_not(
    daemon_factory, fake_llm
):
    """Two final_results in one response: the second was acknowledged "delivered" and
    never sent ([blank, real]: the real answer told delivered while the turn went on
    without it). The first valid one is the answer; any other valid one's result says it
    was not delivered, so the history the model reads next is true."""
    _, chat = await daemon_factory()
    fake_llm.reply_tool_calls(
        [("final_result", {"answer": ""}), ("final_result", {"answer": "Moved to 3pm."})]
    )
    assert (await chat.ask("when is the meeting?", chat="b")).text == "Moved to 3pm."
    assert len(fake_llm.requests) == 1

    fake_llm.reply_tool_calls(
        [("final_result", {"answer": "At 9:00."}), ("final_result", {"answer": "Bring it!"})]
    )
    assert (await chat.ask("when is my flight?", chat="a")).text == "At 9:00."
    await chat.ask("thanks", chat="a")
    history = fake_llm.requests[-1].json["messages"]
    finals = [m["content"] for m in history if m["role"] == "tool"]
    assert finals[-1].startswith("[tool output: final_result]\nError: only one final_result")
    assert "this one was not delivered" in finals[-1]
    assert "Error" not in finals[-2]


async def test_a_reminder_id_no_row_can_have_is_no_such_reminder(daemon_factory, fake_llm, caplog):
    """cancel_reminder with a 20-digit id leaked "OverflowError: Python int too large to
    convert to SQLite INTEGER" and an ERROR traceback; /cancel already said it plainly."""
    _, chat = await daemon_factory()
    fake_llm.reply_tool_calls([("cancel_reminder", {"reminder_id": 99999999999999999999})])
    with caplog.at_level(logging.WARNING):
        await chat.ask("cancel it")
    (result,) = _tool_results(fake_llm)
    assert result.startswith(
        "[tool output: cancel_reminder]\n"
        "Error: there is no active reminder #99999999999999999999 of yours"
    )
    assert not _errors(caplog)


async def test_zero_width_characters_alone_are_blank(daemon_factory, fake_llm):
    """U+200B and U+2060 (format characters) passed every blank check: an answer
    delivered invisible, an empty reminder, an empty fact. Each is refused as blank."""
    from tools.final_result import BLANK

    _, chat = await daemon_factory()
    fake_llm.reply_tool_calls(
        [("remember", {"fact": "\u200b \u2060"}), ("final_result", {"answer": "\u200b\u2060"})]
    )
    fake_llm.reply_tool_calls([("create_reminder", {"content": "\ufeff", "time": "in 1 hour"})])
    fake_llm.reply_tool_calls([("final_result", {"answer": "Nothing to keep."})])
    assert (await chat.ask("hi")).text == "Nothing to keep."
    remembered, answered = _tool_results(fake_llm, 1)
    assert remembered.startswith("[tool output: remember]\nError: the fact is empty\n")
    assert BLANK in answered
    (reminded,) = _tool_results(fake_llm, 2)
    assert reminded.startswith(
        "[tool output: create_reminder]\nError: the reminder has no text; say what to remind"
    )
    assert "no active reminders" in (await chat.ask("/reminders")).text
    assert "\u200b" not in (await chat.ask("/memory")).text


async def test_a_zero_width_answer_is_asked_again(daemon_factory, fake_llm):
    from tools.final_result import BLANK

    _, chat = await daemon_factory()
    fake_llm.reply_tool_calls([("final_result", {"answer": "\u200b\u2060 \n"})])
    fake_llm.reply_tool_calls([("final_result", {"answer": "Hello!"})])
    assert (await chat.ask("hi")).text == "Hello!"
    (result,) = _tool_results(fake_llm)
    assert result.startswith("[tool output: final_result]\nError: ") and BLANK in result


@pytest.mark.parametrize(
    ("text", "blank"),
    [
        ("", True),
        (" \n\t", True),
        ("\u200b\u2060\ufeff\u200d \u00ad", True),
        ("\u200bok", False),
        ("\U0001f468\u200d\U0001f469\u200d\U0001f467", False),  # a family: ZWJs join emoji
        ("\u00a0.", False),
    ],
)
def test_what_shows_nothing(text: str, blank: bool) -> None:
    from bot.text import shows_nothing

    assert shows_nothing(text) is blank


async def test_null_for_an_optional_argument_costs_no_model_call(daemon_factory, fake_llm):
    """get_weather date=null, remember scope=null, final_result next_actions=null were
    each refused, and the model called again; null now means "not given"."""
    _, chat = await daemon_factory()
    fake_llm.reply_tool_calls(
        [
            ("remember", {"fact": "Ana likes tea.", "scope": None}),
            ("final_result", {"answer": "Noted.", "next_actions": None}),
        ]
    )
    reply = await chat.ask("remember I like tea")
    assert reply.text == "Noted."
    assert len(fake_llm.requests) == 1
    assert "Ana likes tea." in (await chat.ask("/memory")).text


async def test_one_request_made_twice_in_a_turn_sets_one_reminder(daemon_factory, fake_llm):
    """The same create_reminder twice in one response set two reminders of one request;
    the second now answers with the first's, and one cancelled in the turn may be set
    again."""
    _, chat = await daemon_factory()
    call = ("create_reminder", {"content": "pay rent", "time": "tomorrow at 9am"})
    fake_llm.reply_tool_calls([call, call])
    await chat.ask("remind me to pay rent tomorrow at 9")
    first, second = _tool_results(fake_llm)
    made = first.split("\nCreated ", 1)[1]
    assert made.startswith("#1 ") and "pay rent" in made
    assert second == (
        f"[tool output: create_reminder]\nAlready created {made}"
        " (by an identical call in this turn; not twice)"
    )
    assert "#2" not in (await chat.ask("/reminders")).text

    fake_llm.reply_tool_calls([call, ("cancel_reminder", {"reminder_id": 2}), call])
    await chat.ask("again")
    created, cancelled, again = _tool_results(fake_llm)
    assert "Created #2 " in created and "Cancelled" in cancelled and "Created #3 " in again
