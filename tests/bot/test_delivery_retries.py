"""A busy database while claiming or marking a delivery: retried with backoff, and the
reply still reaches the chat once and is recorded as sent."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from tests.fakes.waiting import outbox_settled


class Flaky:
    """The real outbox, with ``method`` failing its first ``times`` calls as SQLite does
    when another writer holds the lock."""

    def __init__(self, outbox: Any, method: str, times: int) -> None:
        self._outbox = outbox
        self._method = method
        self.left = times
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        real = getattr(self._outbox, name)
        if name != self._method:
            return real

        async def flaky(*args: Any, **kw: Any) -> Any:
            self.calls += 1
            if self.left > 0:
                self.left -= 1
                raise sqlite3.OperationalError("database is locked")
            return await real(*args, **kw)

        return flaky


@pytest.mark.parametrize("method", ["claim", "mark_sent_keys"])
async def test_a_busy_database_is_retried_and_the_reply_recorded_once(
    daemon_factory, method: str
) -> None:
    daemon, chat = await daemon_factory()
    flaky = Flaky(daemon.delivery._outbox, method, times=2)
    daemon.delivery._outbox = flaky
    reply = await chat.ask("hello")
    assert reply.text == "echo: hello"
    assert await outbox_settled(daemon.db.path) == ["sent"]
    assert flaky.calls == 3  # two refusals, then the attempt that went through
    assert [m.text for m in chat.sent] == ["echo: hello"]  # sent once
