"""The active-reminders limit holds under concurrency: the count and the insert are one
transaction, so twelve /remind at once from one user at 99 active leave exactly 100."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from bot.messages import ChatKey, utcnow
from bot.store.reminders import ReminderKind


async def test_concurrent_remind_at_the_limit_gives_exactly_the_limit(daemon_factory) -> None:
    daemon, chat = await daemon_factory()
    store = daemon.reminders._store
    later = utcnow() + timedelta(days=1)
    for i in range(99):
        await store.add(
            ChatKey("test", f"old{i}"),
            "u1",
            content=f"old {i}",
            kind=ReminderKind.REMINDER,
            fire_at=later,
            recurrence=None,
            timezone="UTC",
        )
    # Twelve chats (groups, say): twelve lanes run the command at the same time.
    replies = await asyncio.gather(
        *(chat.ask(f"/remind in 2 hours | water {i}", chat=f"g{i}") for i in range(12))
    )
    accepted = [r.text for r in replies if r.text.startswith("OK,")]
    refused = [r.text for r in replies if "100 active reminders" in r.text]
    assert (len(accepted), len(refused)) == (1, 11), [r.text for r in replies]
    assert await store.count_active_for_user("test", "u1") == 100
