"""Replicas and one Telegram token: only the replica told to receive polls (a second
poller would get 409 Conflict); a standby one still sends; the one taking over polls
from the offset the last poller committed, so nothing is fetched twice or skipped."""

from __future__ import annotations

import asyncio
from typing import Any

from bot.messages import ChatKey, OutboundMessage
from channels.base import ReceivesAlone
from channels.telegram.adapter import Backoff, TelegramChannel
from channels.telegram.settings import TelegramSettings
from tests.channels.test_telegram_resilience import MemoryState, RecordingBus
from tests.fakes import telegram_api
from tests.fakes.telegram_api import FakeTelegram

fake_telegram = telegram_api.fake_telegram


def replica(tg: FakeTelegram, state: MemoryState) -> TelegramChannel:
    settings = TelegramSettings(token=tg.token, base_url=tg.base_url)
    return TelegramChannel(
        settings, state=state, poll_timeout=1, backoff=Backoff(0.05, 0.4), standby=True
    )


async def test_one_replica_polls_at_a_time_and_the_next_resumes_its_offset(fake_telegram):
    events: list[tuple[str, Any]] = []
    state = MemoryState(events)  # the shared store's kv table
    first, second = replica(fake_telegram, state), replica(fake_telegram, state)
    assert isinstance(first, ReceivesAlone) and first.receive_lease == "telegram:poll"
    bus_one, bus_two = RecordingBus(events), RecordingBus(events)
    await first.start(bus_one.put_inbound)
    await second.start(bus_two.put_inbound)
    try:
        assert first.connected and second.connected  # standing by is healthy
        await second.send(OutboundMessage(key=ChatKey("telegram", "42"), text="from standby"))
        assert fake_telegram.calls_to("getUpdates") == []  # nobody polls without the lease
        await first.receive(True)
        one = fake_telegram.message("one", message_id=1)
        await asyncio.wait_for(bus_one.got.wait(), 10)
        await fake_telegram.wait_for("getUpdates", 2)  # the offset of "one" confirmed
        await first.receive(False)  # its lease lapsed
        polls = len(fake_telegram.calls_to("getUpdates"))
        fake_telegram.message("two", message_id=2)
        await second.receive(True)  # the replica that took the lease over
        await asyncio.wait_for(bus_two.got.wait(), 10)
    finally:
        await first.stop()
        await second.stop()
    assert [e for e in events if e[0] == "put"] == [("put", "1"), ("put", "2")]
    taken_over = fake_telegram.calls_to("getUpdates")[polls]
    assert taken_over.params["offset"] == one["update_id"] + 1  # where the first one left off
    assert [c.params["text"] for c in fake_telegram.sent()] == ["from standby"]
