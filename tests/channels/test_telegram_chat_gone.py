"""A chat that refuses the bot for good (removed from a group, blocked): its repeats
and recurring follow-ups end at the first refusal instead of firing forever (a
follow-up paid a model turn each time before its answer was refused)."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import Any

import pytest

from bot.messages import ChatKey
from bot.store.reminders import ReminderKind
from tests.fakes import telegram_api
from tests.fakes.telegram_api import FakeTelegram
from tests.fakes.waiting import STEP_S, until

fake_telegram = telegram_api.fake_telegram
telegram_daemon = telegram_api.telegram_daemon

GROUP = -7
KICKED = "Forbidden: bot was kicked from the supergroup chat"


async def _status(daemon: Any, reminder_id: int) -> str:
    row = await daemon.db.fetchone("SELECT status FROM reminders WHERE id = ?", (reminder_id,))
    return str(row["status"])


async def _wait_status(daemon: Any, reminder_id: int, status: str) -> None:
    """Until the reminder has ``status``; fails naming the one it kept."""
    seen = [await _status(daemon, reminder_id)]

    async def poll() -> None:
        while seen[-1] != status:
            await asyncio.sleep(0.01)
            seen.append(await _status(daemon, reminder_id))

    try:
        await asyncio.wait_for(poll(), STEP_S)
    except TimeoutError:
        raise AssertionError(f"reminder #{reminder_id} stayed {seen[-1]!r}") from None


def _kick(tg: FakeTelegram, status: int = 403, description: str = KICKED) -> None:
    for method in ("sendMessage", "sendChatAction"):
        tg.fail(method, status, description, times=100, match=lambda p: p["chat_id"] == GROUP)


@pytest.mark.parametrize(
    ("status", "description"),
    [
        (403, KICKED),
        (403, "Forbidden: bot was blocked by the user"),
        (400, "Bad Request: chat not found"),
    ],
)
async def test_a_repeat_in_a_chat_that_removed_the_bot_ends_at_its_first_refusal(
    telegram_daemon: Any, fake_telegram: FakeTelegram, caplog: Any, status: int, description: str
) -> None:
    caplog.set_level(logging.INFO)
    daemon, _ = await telegram_daemon(streaming_off=True)
    group = ChatKey("telegram", str(GROUP))
    repeat = await daemon.reminders.create(group, "7", "water", "now", recurrence="* * * * *")
    in_topic = await daemon.reminders.create(
        ChatKey("telegram", str(GROUP), "5"), "7", "standup", "in 2 hours"
    )
    elsewhere = await daemon.reminders.create(
        ChatKey("telegram", "42"), "7", "stretch", "in 2 hours"
    )
    _kick(fake_telegram, status, description)
    assert repeat.next_fire_at is not None

    await daemon.scheduler.fire_due(repeat.next_fire_at)
    await _wait_status(daemon, repeat.id, "cancelled")
    assert await _status(daemon, in_topic.id) == "cancelled"  # the whole chat is gone
    assert await _status(daemon, elsewhere.id) == "active"
    # Its next run fires nothing: the chat is not asked again.
    await daemon.scheduler.fire_due(repeat.next_fire_at + timedelta(minutes=1))
    attempts = [c for c in fake_telegram.calls_to("sendMessage") if c.params["chat_id"] == GROUP]
    assert len(attempts) == 1
    said = [r.getMessage() for r in caplog.records if r.name == "bot.reminders.service"]
    assert len(said) == 1 and "2 active reminders" in said[0], said


async def test_a_recurring_followup_in_a_chat_that_removed_the_bot_stops_paying_turns(
    telegram_daemon: Any, fake_telegram: FakeTelegram, fake_llm: Any
) -> None:
    daemon, _ = await telegram_daemon(streaming_off=True)
    group = ChatKey("telegram", str(GROUP))
    followup = await daemon.reminders.create(
        group, "7", "check the build", "now", recurrence="*/30 * * * *", kind=ReminderKind.FOLLOWUP
    )
    _kick(fake_telegram)
    assert followup.next_fire_at is not None
    calls = len(fake_llm.requests)

    await daemon.scheduler.fire_due(followup.next_fire_at)  # one turn, its answer refused
    await _wait_status(daemon, followup.id, "cancelled")
    await daemon.scheduler.fire_due(followup.next_fire_at + timedelta(minutes=30))
    turns = await daemon.db.fetchall(
        "SELECT message_id FROM inbox WHERE message_id LIKE 'followup:%'"
    )
    assert len(turns) == 1
    assert len(fake_llm.requests) - calls == 1


async def test_a_refusal_that_is_not_the_chats_leaves_its_repeats(
    telegram_daemon: Any, fake_telegram: FakeTelegram
) -> None:
    """No rights to post (an admin may give them back) is refused, not the chat gone."""
    daemon, _ = await telegram_daemon(streaming_off=True)
    group = ChatKey("telegram", str(GROUP))
    repeat = await daemon.reminders.create(group, "7", "water", "now", recurrence="* * * * *")
    _kick(fake_telegram, 403, "Forbidden: not enough rights to send text messages to the chat")
    assert repeat.next_fire_at is not None

    await daemon.scheduler.fire_due(repeat.next_fire_at)
    await until(lambda: any(not c.ok for c in fake_telegram.calls_to("sendMessage")))
    await until(lambda: daemon.delivery.failed >= 1)
    assert await _status(daemon, repeat.id) == "active"
