"""A group upgraded to a supergroup gets a new chat id: Telegram refuses sends to the old
one (400 with ``migrate_to_chat_id``; PTB's ChatMigrated) and says so in service
messages. The refused delivery goes to the new id, and the chat's reminders follow it."""

from __future__ import annotations

import asyncio
from typing import Any

from bot.messages import ChatKey
from tests.fakes import telegram_api
from tests.fakes.telegram_api import FakeTelegram
from tests.fakes.waiting import STEP_S

fake_telegram = telegram_api.fake_telegram
telegram_daemon = telegram_api.telegram_daemon

OLD, NEW = -5, -1005
UPGRADED = "Bad Request: group chat was upgraded to a supergroup chat"


async def _chat_of(daemon: Any, reminder_id: int, chat_id: int) -> None:
    """Until the reminder is kept under ``chat_id``."""

    async def poll() -> None:
        while True:
            row = await daemon.db.fetchone(
                "SELECT chat_id FROM reminders WHERE id = ?", (reminder_id,)
            )
            if row["chat_id"] == str(chat_id):
                return
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), STEP_S)


def _texts(tg: FakeTelegram, chat_id: int) -> list[str]:
    return [c.params["text"] for c in tg.sent(chat_id)]


def _tried(tg: FakeTelegram, chat_id: int) -> int:
    return sum(1 for c in tg.calls_to("sendMessage") if c.params["chat_id"] == chat_id)


async def test_a_reminder_refused_by_an_upgraded_group_goes_to_its_supergroup(
    telegram_daemon: Any, fake_telegram: FakeTelegram
) -> None:
    daemon, _ = await telegram_daemon(streaming_off=True)
    group = ChatKey("telegram", str(OLD))
    repeat = await daemon.reminders.create(group, "7", "standup", "now", recurrence="* * * * *")
    assert repeat.next_fire_at is not None
    fake_telegram.fail(
        "sendMessage", 400, UPGRADED, migrate_to_chat_id=NEW, times=100,
        match=lambda p: p["chat_id"] == OLD,
    )  # fmt: skip

    await daemon.scheduler.fire_due(repeat.next_fire_at)
    await fake_telegram.wait_sent(1, chat_id=NEW)
    assert "standup" in _texts(fake_telegram, NEW)[0]
    await _chat_of(daemon, repeat.id, NEW)
    # Its next run goes straight to the supergroup: the old id is not tried again.
    moved = await daemon.reminders.get(repeat.id)
    await daemon.scheduler.fire_due(moved.next_fire_at)
    await fake_telegram.wait_sent(2, chat_id=NEW)
    assert _tried(fake_telegram, OLD) == 1


async def test_the_upgrade_service_message_moves_the_groups_reminders(
    telegram_daemon: Any, fake_telegram: FakeTelegram
) -> None:
    daemon, _ = await telegram_daemon(streaming_off=True)
    group = ChatKey("telegram", str(OLD))
    standup = await daemon.reminders.create(group, "7", "standup", "in 2 hours")
    other = await daemon.reminders.create(ChatKey("telegram", "42"), "7", "other", "in 2 hours")
    fake_telegram.add_update(
        {
            "message": fake_telegram.make_message(
                chat_id=OLD, chat_type="group", migrate_to_chat_id=NEW
            )
        }
    )
    fake_telegram.add_update(
        {"message": fake_telegram.make_message(chat_id=NEW, migrate_from_chat_id=OLD)}
    )

    await _chat_of(daemon, standup.id, NEW)
    assert standup.next_fire_at is not None
    await daemon.scheduler.fire_due(standup.next_fire_at)
    await fake_telegram.wait_sent(1, chat_id=NEW)
    assert _tried(fake_telegram, OLD) == 0
    kept = await daemon.reminders.get(other.id)
    assert kept.key == ChatKey("telegram", "42")
