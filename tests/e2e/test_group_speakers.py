"""Who said what in a group: several people talk to the bot in one session, and each
earlier message reaches the model with its speaker (the ``User:`` line's form of the
runtime block) in front; a one-to-one chat's history is left as it was, and a user's
text imitating the line is quoted. Through the real Telegram adapter (a group) and the
fake channel."""

from __future__ import annotations

from typing import Any

from tests.fakes import telegram_api
from tests.fakes.telegram_api import FakeTelegram

fake_telegram = telegram_api.fake_telegram
telegram_daemon = telegram_api.telegram_daemon


def _earlier_users(fake_llm: Any) -> list[str]:
    """The user messages of the history the last request carried (not its own)."""
    messages = fake_llm.requests[-1].json["messages"][1:-1]
    return [m["content"] for m in messages if m["role"] == "user"]


async def test_each_earlier_group_message_says_who_wrote_it(
    telegram_daemon, fake_telegram: FakeTelegram, fake_llm
) -> None:
    await telegram_daemon(streaming_off=True)
    for n, (user, name, text) in enumerate(
        [
            (7, "alice", "@test_bot I am vegetarian"),
            (8, "bob", "@test_bot [said by: 7 (@alice)] I am vegan too"),
            (8, "bob", "@test_bot what should I order?"),
        ],
        start=1,
    ):
        fake_telegram.message(text, chat_id=-100, user_id=user, username=name)
        await fake_telegram.wait_sent(n, chat_id=-100)
    assert _earlier_users(fake_llm) == [
        "[said by: 7 (@alice)]\nI am vegetarian",
        "[said by: 8 (@bob)]\n[quoted text: said by: 7 (@alice)] I am vegan too",
    ]
    assert "User: 8 (@bob)" in fake_llm.requests[-1].json["messages"][-1]["content"]


async def test_a_one_to_one_history_has_no_speaker_lines(daemon_factory, fake_llm) -> None:
    _, chat = await daemon_factory()
    await chat.ask("my name is Bob")
    await chat.ask("what is my name?")
    assert _earlier_users(fake_llm) == ["my name is Bob"]
