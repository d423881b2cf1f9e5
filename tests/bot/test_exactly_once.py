"""One outbox row reaches the channel once, whichever path finds it first.

At start three paths can find the same row: the scheduler's catch-up fire of a reminder
that came due during the downtime, the start-up resume of undelivered outbox rows, and
the live delivery path (including its retries). Each send claims the row in the store
first; only one claim wins.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from bot.messages import ChatKey, OutboundMessage, utcnow
from bot.store.db import Database
from channels.base import PutInbound, Sent
from tests.fakes.channel import FakeChannel
from tests.fakes.storage import Faulty, faulty_storage
from tests.fakes.waiting import inbox_done, until

KEY = ChatKey("test", "c1")


async def _reminder_rows(db: Database) -> int:
    rows = await db.fetchall("SELECT 1 FROM outbox WHERE delivery_key LIKE 'reminder:%'")
    return len(rows)


class SlowPlatform(FakeChannel):
    """Connects only once the catch-up fire has written the outbox row (a platform
    channel waits for its API at start), and holds each send until the test opens it."""

    def __init__(self, db: Database) -> None:
        super().__init__()
        self._db = db
        self.gate = asyncio.Event()
        self.attempts = 0

    async def start(self, put_inbound: PutInbound) -> None:
        async def written() -> None:
            while not await _reminder_rows(self._db):  # noqa: ASYNC110 (polls the database)
                await asyncio.sleep(0.005)

        await asyncio.wait_for(written(), 10)
        await super().start(put_inbound)

    async def send(self, msg: OutboundMessage) -> Sent:
        self.attempts += 1
        await self.gate.wait()
        return await super().send(msg)


async def test_reminder_due_during_downtime_is_delivered_once(daemon_factory, tmp_path) -> None:
    data = tmp_path / "data"
    first, _ = await daemon_factory(data)
    made = await first.reminders.create(KEY, "u1", "drink water", "in 1 hour")
    await first.stop(timeout=1)
    # The daemon stays down past the due time.
    db = Database(data / "bot.db")
    await db.open()
    past = (utcnow() - timedelta(minutes=5)).isoformat()
    await db.execute("UPDATE reminders SET next_fire_at = ? WHERE id = ?", (past, made.id))
    await db.close()

    channel = SlowPlatform(Database(data / "bot.db"))
    await channel._db.open()
    try:
        second, _ = await daemon_factory(data, channel=channel)
        channel.gate.set()  # start-up has resumed the outbox; the live send goes on now
        await until(lambda: channel.sent)
        await second.stop(timeout=2)  # flushes every queued send
    finally:
        await channel._db.close()
    delivered = [m for m in channel.sent if "drink water" in m.text]
    assert len(delivered) == 1, [m.text for m in channel.sent]
    assert channel.attempts == 1


async def test_turn_run_again_after_its_answer_was_queued_answers_once(
    daemon_factory, tmp_path
) -> None:
    """The process dies after a turn queued its answer and before its message was marked
    done: the next start runs the turn again, and its answer must not go out twice."""
    data = tmp_path / "data"

    def stuck(inbox: Faulty) -> Faulty:
        return inbox.fail("done", times=10**6)  # marking done never succeeds in this run

    first, chat = await daemon_factory(data, stores=faulty_storage(inbox=stuck))
    msg = await chat.say("hello", message_id="m1")
    assert (await chat.reply(msg)).text == "echo: hello"
    await first.stop(timeout=0.5)  # the turn is still retrying its done mark: left pending

    second, again = await daemon_factory(data, channel=FakeChannel())
    await inbox_done(second, "m1", timeout=10)
    await second.stop(timeout=2)
    assert [m.text for m in chat.sent + again.sent] == ["echo: hello"]
