"""Slash-command parsing and the command router."""

from __future__ import annotations

import pytest

from bot.handlers.commands import Command, CommandRouter, parse_command
from bot.messages import TO_ANY_BOT, ChatKey, InboundMessage
from tests.conftest import DaemonFactory
from tests.fakes.llm_server import FakeLLM


def inbound(text: str) -> InboundMessage:
    return InboundMessage(key=ChatKey("test", "c"), user_id="u", text=text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/help", ("help", "")),
        ("/help@MyBot", ("help", "")),
        ("/HELP", ("help", "")),
        ("  /help  ", ("help", "")),
        ("/remind in 5m tea", ("remind", "in 5m tea")),
        ("/remind@MyBot   in 5m tea  ", ("remind", "in 5m tea")),
        ("/remind\tin 5m", ("remind", "in 5m")),
        ("/remind\nline one\nline two", ("remind", "line one\nline two")),
        ("/set_tz Europe/Paris", ("set_tz", "Europe/Paris")),
        ("/v2", ("v2", "")),
        ("hello", None),
        ("hello /help", None),
        ("", None),
        ("   ", None),
        ("/", None),
        ("/ x", None),
        ("//x", None),
        ("/123abc", None),
        ("/usr/bin/env", None),
        ("/@MyBot", None),
        ("/hé", None),
        ("/-x", None),
    ],
)
def test_parse_command(text: str, expected: tuple[str, str] | None) -> None:
    assert parse_command(text) == expected


async def test_match_known_and_unknown() -> None:
    router = CommandRouter()
    matched = router.match(inbound("/help@MyBot please"))
    assert matched is not None
    cmd, args = matched
    assert cmd.name == "help"
    assert args == "please"
    assert router.match(inbound("just chatting")) is None
    assert router.match(inbound("/start")) is None  # the platform's greeting: the assistant's
    # In a group a bare /start goes to every bot there: not ours unless it names us.
    other_bots = InboundMessage(ChatKey("test", "g"), "u", "/start", extras={TO_ANY_BOT: True})
    silent = router.match(other_bots)
    assert silent is not None and await silent[0].func(other_bots, "") == ""


async def test_an_unknown_command_is_answered_without_the_model() -> None:
    matched = CommandRouter().match(inbound("/foo@MyBot bar"))
    assert matched is not None
    cmd, args = matched
    assert await cmd.func(inbound("/foo@MyBot bar"), args) == "Unknown command /foo, see /help."


async def test_an_unknown_command_in_a_chat_never_reaches_the_model(
    daemon_factory: DaemonFactory, fake_llm: FakeLLM
) -> None:
    _, chat = await daemon_factory()
    assert (await chat.ask("/foo bar")).text == "Unknown command /foo, see /help."
    assert fake_llm.requests == []


async def test_registered_command_runs_and_help_lists_it() -> None:
    router = CommandRouter()
    seen: list[str] = []

    async def ping(msg: InboundMessage, args: str) -> str:
        seen.append(args)
        return "pong"

    router.register(Command("ping", "/ping [text]", "check the bot is alive", ping))
    router.register(Command("about", "/about", "what this bot is", ping))
    assert router.names() == ["about", "help", "ping"]

    matched = router.match(inbound("/ping hello there"))
    assert matched is not None
    cmd, args = matched
    assert await cmd.func(inbound("/ping hello there"), args) == "pong"
    assert seen == ["hello there"]

    help_cmd, help_args = router.match(inbound("/help")) or (None, "")
    assert help_cmd is not None
    text = await help_cmd.func(inbound("/help"), help_args)
    lines = text.splitlines()
    usage_lines = [line for line in lines if line.startswith("/")]
    assert usage_lines == [
        "/about — what this bot is",
        "/help — show the commands",
        "/ping [text] — check the bot is alive",
    ]
    assert lines[0].startswith("Commands")
