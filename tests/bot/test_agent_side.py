"""The agent side (model client, tools, MCP servers, skills, memory, the turn loop) is
built right after ``ready:``, not by ``build_daemon``: no turn can run before the
channels are up, so start-up does not pay its imports. A message waiting in the journal
from the last run may be taken before that; its turn builds the agent side itself."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.app import build_daemon
from bot.bus.durable import DurableBus
from bot.daemon import Daemon
from bot.messages import ChatKey, InboundMessage
from bot.store.sqlite import sqlite_storage
from channels.base import PutInbound
from tests.conftest import make_settings
from tests.fakes.channel import FakeChannel
from tests.fakes.llm_server import FakeLLM


class _Watching(FakeChannel):
    """Notes whether the agent side existed when the daemon started this channel."""

    daemon: Daemon | None = None
    agent_at_start: object = "not started"

    async def start(self, put_inbound: PutInbound) -> None:
        assert self.daemon is not None
        self.agent_at_start = self.daemon.agent.built
        await super().start(put_inbound)


async def test_the_agent_side_is_built_right_after_ready(tmp_path: Path, fake_llm: FakeLLM):
    channel = _Watching()
    daemon = build_daemon(make_settings(tmp_path / "data", fake_llm.url), [channel])
    channel.daemon = daemon
    assert daemon.agent.built is None
    await daemon.start()
    try:
        assert channel.agent_at_start is None  # channels connected without it
        side = daemon.agent.built
        assert side is not None and daemon.state == "ready"
        # Its warm-up ran: the metric families are built, every tool's schema check compiled.
        assert daemon.metrics._built is not None
        assert all(type(side.tools.get(n))._validator is not None for n in side.tools.names())
        msg = await channel.say("hello")
        replies = await channel.wait_for(bool)
        assert [r.text for r in replies] == ["echo: hello"]
        assert replies[0].reply_to == msg.message_id
        assert daemon.agent.built is side  # built once
    finally:
        await daemon.stop()


class _SlowToConnect(FakeChannel):
    """Connects only once the daemon has answered what waited in the journal."""

    async def start(self, put_inbound: PutInbound) -> None:
        await self.wait_for(bool, timeout=20)
        await super().start(put_inbound)


async def test_a_message_replayed_before_ready_builds_the_agent_side(
    tmp_path: Path, fake_llm: FakeLLM
):
    data = tmp_path / "data"
    data.mkdir()
    waiting = InboundMessage(key=ChatKey("test", "c1"), user_id="u1", text="still there?")
    storage = sqlite_storage(data / "bot.db")  # what the last run journaled, unanswered
    await storage.backend.open()
    await DurableBus(storage.inbox, storage.outbox).put_inbound(waiting)
    await storage.backend.close()

    channel = _SlowToConnect()
    daemon = build_daemon(make_settings(data, fake_llm.url), [channel])
    await asyncio.wait_for(daemon.start(), 30)
    try:
        assert [m.text for m in channel.replies_to(waiting)] == ["echo: still there?"]
        assert daemon.agent.built is not None
    finally:
        await daemon.stop()
