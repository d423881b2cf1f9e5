"""The reminders store's part of a chat's limit, on each backend: every member's active
reminders in the chat (any thread) counted with the insert, and the chat's own list."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot.errors import ChatQuotaExceeded
from bot.messages import ChatKey
from bot.store.base import Storage
from bot.store.reminders import ReminderKind, ReminderStatus
from tests.bot.test_storage_contract import BACKENDS

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
GROUP, TOPIC = ChatKey("telegram", "-100"), ChatKey("telegram", "-100", "7")


@pytest_asyncio.fixture(params=sorted(BACKENDS))
async def storage(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Storage]:
    async with BACKENDS[request.param].opened(tmp_path) as opened:
        yield opened


async def _remind(store: Storage, key: ChatKey, user: str, **kw: Any) -> Any:
    return await store.reminders.add(
        key,
        user,
        content="x",
        kind=ReminderKind.REMINDER,
        fire_at=T0,
        recurrence=None,
        timezone="UTC",
        **kw,
    )


async def test_a_chats_reminders_and_its_limit(storage: Storage) -> None:
    first = await _remind(storage, GROUP, "u1", max_active_in_chat=3)
    await _remind(storage, ChatKey("telegram", "-200"), "u2")
    made = await asyncio.gather(
        *(_remind(storage, TOPIC, f"m{i}", max_active_in_chat=3) for i in range(4)),
        return_exceptions=True,
    )
    assert sum(isinstance(r, ChatQuotaExceeded) for r in made) == 2
    listed = await storage.reminders.active_in_chat("telegram", "-100")
    assert len(listed) == 3 and listed[0] == first
    assert {r.key.chat_id for r in listed} == {"-100"}
    await storage.reminders.set_status(first.id, ReminderStatus.CANCELLED)
    await _remind(storage, GROUP, "u1", max_active_in_chat=3)
    with pytest.raises(ChatQuotaExceeded, match="3"):
        await _remind(storage, GROUP, "u9", max_active_in_chat=3)
