"""/healthz and /metrics on a live daemon: each failing part named, each counter real."""

from __future__ import annotations

import asyncio
import socket
from datetime import timedelta
from typing import Any

import pytest

from bot.app import build_daemon
from bot.errors import ConfigError
from bot.messages import ChatKey, utcnow
from bot.ops import web
from bot.store.db import Database
from bot.store.reminders import ReminderKind, ReminderStore
from tests.conftest import DaemonFactory, make_settings
from tests.fakes.channel import FakeChannel
from tests.fakes.llm_server import FakeLLM
from tests.fakes.web_client import get as _get
from tests.fakes.web_client import metrics as _metrics
from tests.fakes.web_client import value as _value


async def test_healthz_ok_then_names_each_failing_part(
    daemon_factory: DaemonFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    daemon, channel = await daemon_factory()
    assert daemon.web is not None and daemon.web.port > 0
    status, body = await _get(daemon, "/healthz")
    assert status == 200, body
    assert body["status"] == "ok" and body["failing"] == []
    assert body["database"] == body["loop"] == body["channel:test"] == body["daemon"] == "ok"

    async def not_writable() -> bool:
        return False

    monkeypatch.setattr(daemon.db, "writable", not_writable)
    status, body = await _get(daemon, "/healthz")
    assert (status, body["failing"], body["database"]) == (503, ["database"], "not writable")

    async def hangs() -> bool:
        await asyncio.sleep(30)
        return True

    monkeypatch.setattr(daemon.db, "writable", hangs)
    monkeypatch.setattr(web, "PROBE_TIMEOUT_S", 0.1)
    status, body = await _get(daemon, "/healthz")
    assert (status, body["database"]) == (503, "no answer within 0.1 s")

    monkeypatch.undo()
    channel.put_inbound = None  # the platform connection dropped
    status, body = await _get(daemon, "/healthz")
    assert (status, body["failing"]) == (503, ["channel:test"])
    assert body["channel:test"] == "not connected"


async def test_healthz_503_while_stopping_and_running_turn_finishes(
    daemon_factory: DaemonFactory, fake_llm: FakeLLM
) -> None:
    daemon, channel = await daemon_factory()
    fake_llm.reply_tool_calls([("final_result", {"answer": "finished in time"})], delay=1.0)
    msg = await channel.say("slow one")
    await fake_llm.wait_requests(1)
    stopping = asyncio.create_task(daemon.stop(timeout=10))
    await asyncio.sleep(0)  # stop() marks the state before its first await
    assert daemon.state == "stopping"
    status, body = await _get(daemon, "/healthz")
    assert (status, body["daemon"], body["failing"]) == (503, "stopping", ["daemon"])
    await asyncio.wait_for(stopping, 15)
    assert [m.text for m in channel.replies_to(msg)] == ["finished in time"]


async def test_metrics_count_messages_turns_model_and_tool_calls(
    daemon_factory: DaemonFactory, fake_llm: FakeLLM
) -> None:
    daemon, channel = await daemon_factory()
    await channel.ask("hi")
    fake_llm.reply_tool_calls([("get_weather", {})])  # missing city: a tool error
    await channel.ask("weather?")
    fake_llm.reply_error(500).reply_error(500)  # max_retries=1: two attempts, both fail
    reply = await channel.ask("again")
    assert "unavailable" in reply.text
    await channel.ask("/help")

    # Sent deliveries are marked in batches right after the send: await the last one.
    async with asyncio.timeout(5):
        while _value(m := await _metrics(daemon), "bot_outbox_depth") != 0:  # noqa: ASYNC110
            await asyncio.sleep(0.01)
    assert _value(m, "bot_messages_in_total", channel="test") == 4
    assert _value(m, "bot_messages_out_total", channel="test", kind="reply") == 3
    assert _value(m, "bot_messages_out_total", channel="test", kind="error") == 1
    turns = {"channel": "test", "kind": "agent"}
    assert _value(m, "bot_turn_seconds_count", **turns, outcome="ok") == 2
    assert _value(m, "bot_turn_seconds_count", **turns, outcome="model_unavailable") == 1
    assert _value(m, "bot_turn_seconds_count", channel="test", kind="command", outcome="ok") == 1
    assert _value(m, "bot_model_calls_total", model="openai/fake-model") == 5
    errors = {"model": "openai/fake-model", "kind": "server error (HTTP 500)"}
    assert _value(m, "bot_model_errors_total", **errors) == 2
    assert _value(m, "bot_tool_calls_total", tool="final_result", outcome="ok") == 2
    assert _value(m, "bot_tool_calls_total", tool="get_weather", outcome="error") == 1
    assert _value(m, "bot_outbox_depth") == 0
    assert _value(m, "bot_workers_active") == 1
    assert _value(m, "bot_channel_connected", channel="test") == 1


async def test_reminder_metrics_scheduled_fired_late_missed(
    daemon_factory: DaemonFactory, tmp_path: Any
) -> None:
    data = tmp_path / "data"
    db = Database(data / "bot.db")
    await db.open()
    store = ReminderStore(db)
    for content, ago in (("late one", timedelta(minutes=5)), ("missed one", timedelta(days=3))):
        await store.add(
            ChatKey("test", "c1"),
            "u1",
            content=content,
            kind=ReminderKind.REMINDER,
            fire_at=utcnow() - ago,
            recurrence=None,
            timezone="UTC",
        )
    await db.close()

    daemon, channel = await daemon_factory(data_dir=data)
    await channel.ask("/remind in 1 seconds | on time")
    await channel.wait_for(lambda sent: sum(m.text.startswith("⏰") for m in sent) == 3)
    m = await _metrics(daemon)
    assert _value(m, "bot_reminders_scheduled_total") == 1
    assert _value(m, "bot_reminders_fired_total") == 2
    assert _value(m, "bot_reminders_late_total") == 1
    assert _value(m, "bot_reminders_missed_total") == 1
    assert _value(m, "bot_messages_out_total", channel="test", kind="reminder") == 3


async def test_two_daemons_keep_separate_registries(
    daemon_factory: DaemonFactory, tmp_path: Any
) -> None:
    first, ch1 = await daemon_factory(data_dir=tmp_path / "one")
    second, _ = await daemon_factory(data_dir=tmp_path / "two")
    assert first.web is not None and second.web is not None
    assert first.web.port != second.web.port
    await ch1.ask("only the first")
    assert _value(await _metrics(first), "bot_messages_in_total", channel="test") == 1
    assert _value(await _metrics(second), "bot_messages_in_total", channel="test") == 0


async def test_web_can_be_disabled(daemon_factory: DaemonFactory) -> None:
    daemon, channel = await daemon_factory(web={"enabled": False})
    assert daemon.web is None
    assert (await channel.ask("still works")).text == "echo: still works"


async def test_port_in_use_fails_start_with_one_line(tmp_path: Any, fake_llm: FakeLLM) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        daemon = build_daemon(make_settings(tmp_path / "data", fake_llm.url, web={"port": port}))
        with pytest.raises(ConfigError, match=r"web\.port.*cannot listen") as err:
            await daemon.start()
    assert "\n" not in str(err.value)
    assert daemon.db._conn is None  # failed before anything was opened


class _SlowToConnect(FakeChannel):
    """A channel whose start suspends (a platform's first network round trip), long
    enough for a due reminder to reach the outbox but not to be sent and marked."""

    async def start(self, put_inbound: Any) -> None:
        for _ in range(3):
            await asyncio.sleep(0)
        await super().start(put_inbound)


async def test_a_reminder_due_at_start_is_sent_once(
    daemon_factory: DaemonFactory, tmp_path: Any
) -> None:
    data = tmp_path / "data"
    db = Database(data / "bot.db")
    await db.open()
    await ReminderStore(db).add(
        ChatKey("test", "c1"),
        "u1",
        content="while you were away",
        kind=ReminderKind.REMINDER,
        fire_at=utcnow() - timedelta(minutes=5),
        recurrence=None,
        timezone="UTC",
    )
    await db.close()
    _, channel = await daemon_factory(data_dir=data, channel=_SlowToConnect())
    await channel.wait_for(lambda sent: any("while you were away" in m.text for m in sent))
    await channel.ask("barrier")  # anything queued twice would be out by now
    assert sum("while you were away" in m.text for m in channel.sent) == 1
