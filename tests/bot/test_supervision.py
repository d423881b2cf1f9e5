"""Nothing stops answering: one failed statement leaves its message pending and retried,
a long-lived task that dies is restarted and counted, and /healthz names a dead part.

Faults come from a real storage (SQLite) whose repository raises
``sqlite3.OperationalError`` once, as a locked or full database does.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3

from bot.messages import ChatKey, InboundMessage, OutboundKind
from bot.ops.metrics import PrometheusMetrics
from bot.ops.supervisor import Supervisor
from bot.store.db import HEALTH_PROBE_KEY
from tests.fakes.channel import FakeChannel
from tests.fakes.storage import faulty_storage
from tests.fakes.waiting import inbox_done, until


async def test_locked_database_on_a_refusal_notice_is_retried_and_answering_goes_on(
    daemon_factory,
) -> None:
    faults = {}

    def outbox(f):  # the first write of the run is the stranger's notice
        faults["outbox"] = f.fail("add", times=1)
        return f

    def inbox(f):
        faults["inbox"] = f.fail("done", times=1)
        return f

    channel = FakeChannel("test", trusted=False)
    daemon, chat = await daemon_factory(
        channel=channel, stores=faulty_storage(outbox=outbox, inbox=inbox), admins=["test:boss"]
    )
    assert chat.put_inbound is not None
    stranger = InboundMessage(ChatKey("test", "s1"), "stranger", "hi", message_id="x1", direct=True)
    await chat.put_inbound(stranger)
    notice = await chat.reply(stranger)
    assert notice.kind is OutboundKind.NOTICE and "approved users" in notice.text
    assert (await chat.ask("still there?", user="boss")).text == "echo: still there?"
    await until(lambda: faults["inbox"].raised == ["done"])
    assert faults["outbox"].raised == ["add"]
    await inbox_done(daemon, "x1")  # retried, not left for the next start
    assert len(chat.replies_to(stranger)) == 1
    assert (await daemon.health()).ok
    assert daemon.dispatcher.retries >= 2


async def test_locked_database_marking_a_turn_done_is_retried(daemon_factory, fake_llm) -> None:
    faults = {}

    def inbox(f):
        faults["inbox"] = f.fail("done", times=1)
        return f

    daemon, chat = await daemon_factory(stores=faulty_storage(inbox=inbox))
    first = await chat.say("first", message_id="m1")
    assert (await chat.reply(first)).text == "echo: first"
    await until(lambda: faults["inbox"].raised == ["done"])
    assert (await chat.ask("second")).text == "echo: second"
    await inbox_done(daemon, "m1")  # retried now, not left for the next start to replay
    assert len(fake_llm.requests) == 2  # the turn itself ran once
    assert daemon.dispatcher.retries == 1


async def test_locked_database_marking_a_reply_sent_is_retried(daemon_factory) -> None:
    faults = {}

    def outbox(f):
        faults["outbox"] = f.fail("mark_sent_keys", times=1)
        return f

    daemon, chat = await daemon_factory(stores=faulty_storage(outbox=outbox))
    reply = await chat.ask("hi")

    async def sent() -> None:
        query = "SELECT status FROM outbox WHERE delivery_key = ?"
        while (await daemon.db.fetchone(query, (reply.delivery_key,)))["status"] != "sent":  # noqa: ASYNC110
            await asyncio.sleep(0.01)

    await asyncio.wait_for(sent(), 5)  # not left claimed, to be re-sent after a restart
    assert faults["outbox"].raised == ["mark_sent_keys"]


async def test_a_task_that_dies_is_restarted_logged_and_counted(caplog) -> None:
    metrics = PrometheusMetrics()
    supervisor = Supervisor(metrics, backoff_s=0.001)
    runs = 0
    forever = asyncio.Event()

    async def pump() -> None:
        nonlocal runs
        runs += 1
        if runs <= 2:
            raise sqlite3.OperationalError("database is locked")
        await forever.wait()

    with caplog.at_level(logging.ERROR, logger="bot.ops.supervisor"):
        supervisor.spawn("pump", pump)
        await until(lambda: runs == 3)
    assert supervisor.states() == {"pump": "ok"}
    assert supervisor.restarts("pump") == 2
    assert caplog.text.count("task pump died; restarting it") == 2
    assert "database is locked" in caplog.text
    assert 'bot_task_restarts_total{task="pump"} 2.0' in (await metrics.render()).decode()
    await supervisor.stop()


async def test_healthz_is_503_naming_a_dead_task(daemon_factory) -> None:
    daemon, _ = await daemon_factory()
    assert daemon.supervisor.states() == {"outbound": "ok", "dispatcher": "ok"}
    assert (await daemon.health()).ok

    async def broken() -> None:
        raise sqlite3.OperationalError("disk I/O error")

    daemon.supervisor._backoff_s = 60.0  # stays dead for the test's length
    daemon.supervisor.spawn("pump", broken)
    await until(lambda: daemon.supervisor.states()["pump"] != "ok")
    health = await daemon.health()
    assert not health.ok
    assert health.body()["failing"] == ["task:pump"]
    assert "disk I/O error" in health.parts["task:pump"]


async def test_health_probe_writes_the_database_file(daemon_factory) -> None:
    daemon, _ = await daemon_factory()
    assert (await daemon.health()).ok
    with sqlite3.connect(daemon.db.path) as other:  # a second connection sees the file
        (stamp,) = other.execute(
            "SELECT value FROM kv WHERE key = ?", (HEALTH_PROBE_KEY,)
        ).fetchone()
    assert stamp
