"""Per-chat workers: order within a chat, concurrency across chats, caps, reaping, drain."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable

import pytest

from bot.bus.base import InProcessBus
from bot.dispatcher.dispatcher import Dispatcher
from bot.messages import ChatKey, InboundMessage, OutboundKind
from tests.fakes.waiting import until as wait_until

A = ChatKey("test", "A")
B = ChatKey("test", "B")
TIMEOUT = 2.0


def msg(key: ChatKey, text: str, message_id: str | None = None) -> InboundMessage:
    return InboundMessage(key=key, user_id="u1", text=text, message_id=message_id or text)


async def until(condition: Callable[[], bool], timeout: float = TIMEOUT) -> None:
    await wait_until(condition, timeout)


class Recorder:
    """A handler whose turns block until the test opens their gate."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.started: dict[str, asyncio.Event] = {}
        self.gates: dict[str, asyncio.Event] = {}
        self.in_flight = 0
        self.max_in_flight = 0

    def gate(self, text: str) -> asyncio.Event:
        return self.gates.setdefault(text, asyncio.Event())

    def started_event(self, text: str) -> asyncio.Event:
        return self.started.setdefault(text, asyncio.Event())

    async def __call__(self, m: InboundMessage) -> None:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        self.events.append(f"start {m.text}")
        self.started_event(m.text).set()
        try:
            if m.text in self.gates:
                await self.gates[m.text].wait()
        finally:
            self.events.append(f"end {m.text}")
            self.in_flight -= 1

    def done(self, text: str) -> bool:
        return f"end {text}" in self.events


async def test_order_within_chat_and_concurrency_across_chats() -> None:
    rec = Recorder()
    slow = rec.gate("a1")
    d = Dispatcher(InProcessBus(), rec)
    for text in ("a1", "a2", "a3"):
        await d.submit(msg(A, text))
    await asyncio.wait_for(rec.started_event("a1").wait(), TIMEOUT)

    # Chat B runs to completion while chat A's first turn is still blocked.
    await d.submit(msg(B, "b1"))
    await asyncio.wait_for(rec.started_event("b1").wait(), TIMEOUT)
    await until(lambda: rec.done("b1"))
    assert not rec.done("a1")
    assert "start a2" not in rec.events  # a2 waits for a1 even though a slot is free

    slow.set()
    await until(lambda: rec.done("a3"))
    a_events = [e for e in rec.events if e.split()[1].startswith("a")]
    assert a_events == ["start a1", "end a1", "start a2", "end a2", "start a3", "end a3"]
    assert await d.drain(TIMEOUT)


async def test_max_concurrent_cap_holds() -> None:
    rec = Recorder()
    keys = [ChatKey("test", f"chat{i}") for i in range(10)]
    for i in range(10):
        rec.gate(f"m{i}")
    d = Dispatcher(InProcessBus(), rec, max_concurrent=3)
    for i, key in enumerate(keys):
        await d.submit(msg(key, f"m{i}"))
    await until(lambda: rec.in_flight == 3)
    # Give the other seven workers every chance to (wrongly) start.
    for _ in range(20):
        await asyncio.sleep(0)
    await asyncio.sleep(0.02)
    assert rec.in_flight == 3
    assert d.active_workers == 10

    for gate in rec.gates.values():
        gate.set()
    await until(lambda: all(rec.done(f"m{i}") for i in range(10)))
    assert rec.max_in_flight == 3
    assert await d.drain(TIMEOUT)


async def test_idle_worker_is_reaped_and_chat_still_works() -> None:
    rec = Recorder()
    d = Dispatcher(InProcessBus(), rec, idle_s=0.05)
    await d.submit(msg(A, "first"))
    await until(lambda: rec.done("first"))
    await until(lambda: d.active_workers == 0)

    await d.submit(msg(A, "second"))
    assert d.active_workers == 1
    await until(lambda: rec.done("second"))
    await until(lambda: d.active_workers == 0)
    assert rec.events == ["start first", "end first", "start second", "end second"]


async def test_failing_turn_reports_error_id_and_worker_survives(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bus = InProcessBus()
    handled: list[str] = []

    async def handler(m: InboundMessage) -> None:
        if m.text == "boom":
            raise RuntimeError("kaput-in-handler")
        handled.append(m.text)

    d = Dispatcher(bus, handler)
    with caplog.at_level(logging.ERROR, logger="bot.dispatcher.dispatcher"):
        await d.submit(msg(A, "boom", message_id="m-boom"))
        await d.submit(msg(A, "after"))
        out = await asyncio.wait_for(bus.get_outbound(), TIMEOUT)
        await until(lambda: handled == ["after"])

    assert out.kind is OutboundKind.ERROR
    assert out.key == A
    assert out.reply_to == "m-boom"
    match = re.search(r"error id ([0-9a-f]+)", out.text)
    assert match, out.text
    error_id = match.group(1)
    assert "kaput" not in out.text  # internals are not shown to the user

    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert error_id in record.getMessage()
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], RuntimeError)
    assert "kaput-in-handler" in caplog.text  # the traceback is in the log
    assert bus.outbound_depth() == 0
    assert await d.drain(TIMEOUT)


async def test_drain_waits_for_queued_turns() -> None:
    rec = Recorder()
    gate = rec.gate("a1")
    d = Dispatcher(InProcessBus(), rec)
    for text in ("a1", "a2", "a3"):
        await d.submit(msg(A, text))
    await d.submit(msg(B, "b1"))
    await asyncio.wait_for(rec.started_event("a1").wait(), TIMEOUT)

    drain = asyncio.create_task(d.drain(TIMEOUT))
    await asyncio.sleep(0.02)
    assert not drain.done()  # still waiting for a1..a3

    # New messages are refused once draining started.
    await d.submit(msg(A, "late"))
    gate.set()
    assert await asyncio.wait_for(drain, TIMEOUT + 1) is True
    assert all(rec.done(t) for t in ("a1", "a2", "a3", "b1"))
    assert "start late" not in rec.events
    assert d.active_workers == 0


async def test_drain_times_out_and_cancels() -> None:
    rec = Recorder()
    rec.gate("stuck")  # never opened
    d = Dispatcher(InProcessBus(), rec)
    await d.submit(msg(A, "stuck"))
    await asyncio.wait_for(rec.started_event("stuck").wait(), TIMEOUT)
    assert await asyncio.wait_for(d.drain(0.05), TIMEOUT) is False
    assert d.active_workers == 0
    assert rec.in_flight == 0  # the stuck turn was cancelled, not left running


async def test_drain_with_nothing_to_do() -> None:
    d = Dispatcher(InProcessBus(), Recorder())
    assert await d.drain(0.01) is True


async def test_run_consumes_the_bus() -> None:
    bus = InProcessBus()
    rec = Recorder()
    d = Dispatcher(bus, rec)
    runner = asyncio.create_task(d.run())
    try:
        await bus.put_inbound(msg(A, "via-bus"))
        await until(lambda: rec.done("via-bus"))
    finally:
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)
    assert await d.drain(TIMEOUT)


async def test_filters_can_drop_messages() -> None:
    rec = Recorder()

    async def only_even(m: InboundMessage) -> bool:
        return int(m.text) % 2 == 0

    d = Dispatcher(InProcessBus(), rec, filters=[only_even])
    for i in range(4):
        await d.submit(msg(A, str(i)))
    assert await d.drain(TIMEOUT)
    assert rec.events == ["start 0", "end 0", "start 2", "end 2"]
