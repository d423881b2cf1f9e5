"""The PostgreSQL store after the server dropped its connections (a restart, a failover,
``pg_terminate_backend``): the next statements run on fresh connections.

asyncpg hands a connection the server closed back to its pool by itself, detaching the
proxy the store keeps between statements; a kept proxy used after that fails its
statement ("connection has been released back to the pool"). Each kept connection cost
one failed statement: a turn's write (an attempt counted towards retiring the message),
a journal write (a platform retry), the shared inbox poll.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
import pytest_asyncio

from bot.app import build_daemon
from bot.daemon import Daemon
from bot.errors import StoreUnavailable
from bot.messages import InboundMessage, OutboundKind
from bot.store.postgres.database import PostgresDatabase
from tests.bot.test_pg_pool_size import burst, opened_by, tagged
from tests.conftest import make_settings
from tests.fakes.channel import FakeChannel
from tests.fakes.pg_cut import CuttableRelay
from tests.fakes.waiting import STEP_S

KEPT = 4


async def terminate(url: str, name: str) -> int:
    """Ends every server backend of ``name``, as a server restart would."""
    conn = await asyncpg.connect(url)
    try:
        ended: int = await conn.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE application_name = $1",
            name,
        )
        return ended
    finally:
        await conn.close()


async def test_statements_after_the_server_dropped_every_connection_succeed(
    postgres_url: str,
) -> None:
    url, name = tagged(postgres_url)
    db = PostgresDatabase(url, max_connections=KEPT)
    await db.open()
    try:
        await burst(db, KEPT * 2)  # every connection kept between statements
        assert await terminate(postgres_url, name) == KEPT
        # asyncpg reads each connection's termination notice as it comes: once the pool
        # counts only connections the server has (its refill may open one anew), every
        # dropped one was noticed.
        await asyncio.wait_for(_until_noticed(db, postgres_url, name), STEP_S)
        for i in range(KEPT + 1):
            assert await db.fetch("SELECT $1::int AS i", i) == [(i,)]
        assert 1 <= await opened_by(postgres_url, name) <= KEPT
    finally:
        await db.close()


async def _until_noticed(db: PostgresDatabase, url: str, name: str) -> None:
    while db.pool.get_size() != await opened_by(url, name):  # noqa: ASYNC110 (the server)
        await asyncio.sleep(0.01)


async def backends_waiting_on_a_lock(url: str, name: str) -> list[int]:
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch(
            "SELECT pid FROM pg_stat_activity WHERE application_name = $1"
            " AND wait_event_type = 'Lock'",
            name,
        )
        return [int(r["pid"]) for r in rows]
    finally:
        await conn.close()


@pytest_asyncio.fixture
async def pg_daemon(
    fake_llm: Any, postgres_url: str, tmp_path: Path
) -> AsyncIterator[tuple[Daemon, FakeChannel, str]]:
    """A daemon on PostgreSQL whose connections carry a name of the test's own."""
    url, name = tagged(postgres_url)
    channel = FakeChannel()
    daemon = build_daemon(make_settings(tmp_path, fake_llm.url, store={"url": url}), [channel])
    await daemon.start()
    try:
        yield daemon, channel, name
    finally:
        await daemon.stop(timeout=2)


async def test_a_turn_whose_write_the_server_cut_off_runs_again_unapologized(
    pg_daemon: tuple[Daemon, FakeChannel, str],
    fake_llm: Any,
    postgres_url: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The server drops the daemon's connection in the middle of the turn's answer write
    (held on a table lock by the test, then the backend terminated): the turn runs
    again and answers, where the user was told "Sorry, something went wrong"."""
    daemon, chat, name = pg_daemon
    release = fake_llm.held_answer("lost with its connection")
    msg = await chat.say("hello", message_id="h1")
    await fake_llm.wait_requests(1)
    locker = await asyncpg.connect(postgres_url)
    try:
        async with locker.transaction():
            await locker.execute("LOCK TABLE outbox IN SHARE ROW EXCLUSIVE MODE")
            release.set()  # the answer's outbox insert now waits on the lock
            async with asyncio.timeout(STEP_S):
                while not (waiting := await backends_waiting_on_a_lock(postgres_url, name)):  # noqa: ASYNC110
                    await asyncio.sleep(0.01)
            await locker.execute(
                "SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) pid", waiting
            )
    finally:
        await locker.close()
    reply = await chat.reply(msg)
    assert (reply.kind, reply.text) == (OutboundKind.REPLY, "echo: hello")  # the replay's
    await inbox_done_pg(daemon, "h1")
    assert [m.text for m in chat.replies_to(msg)] == ["echo: hello"]
    assert len(fake_llm.requests) == 2
    said = [r.getMessage() for r in caplog.records if r.name == "bot.store.postgres.database"]
    # One line when it went, one when it came back: not one per failed statement.
    assert [m.split(" (")[0].split(" at ")[0] for m in said] == [
        "PostgreSQL connection lost",
        "PostgreSQL answers again",
    ]


async def inbox_done_pg(daemon: Any, message_id: str) -> None:
    async with asyncio.timeout(STEP_S):
        while (  # noqa: ASYNC110 (a row of the database)
            await daemon.db.fetchval("SELECT status FROM inbox WHERE message_id = $1", message_id)
            != "done"
        ):
            await asyncio.sleep(0.01)


async def test_turns_on_connections_whose_backend_was_just_terminated_run_again(
    fake_llm: Any, postgres_url: str, tmp_path: Path
) -> None:
    """The server terminates every backend (``pg_terminate_backend``, as a restart does)
    and the daemon has read the FATAL but not yet the end of the stream: a kept
    connection still reports itself open, and asyncpg refuses it ("cannot switch to
    state 12; another operation (2) is in progress"). The turns that draw one run again
    on a fresh connection, where users were told "Sorry, something went wrong"."""
    url, name = tagged(postgres_url)
    relay = CuttableRelay(url)
    await relay.start()
    channel = FakeChannel()
    settings = make_settings(tmp_path, fake_llm.url, store={"url": relay.url})
    daemon = build_daemon(settings, [channel])
    await daemon.start()
    try:
        warm = [await channel.say(f"warm {i}", chat=f"c{i}") for i in range(KEPT)]
        for msg in warm:
            await channel.reply(msg)
        relay.hold_eof = True
        assert await terminate(postgres_url, name) >= 1
        await asyncio.sleep(0.2)  # the FATALs are read, the ends held back
        said = [await _delivered(channel, f"after {i}", f"c{i}") for i in range(KEPT * 2)]
        for msg in said:
            await channel.reply(msg)
        for msg in said:
            assert [(m.kind, m.text) for m in channel.replies_to(msg)] == [
                (OutboundKind.REPLY, f"echo: {msg.text}")
            ]
    finally:
        relay.hold_eof = False
        relay.sever()  # the held ends, at last
        relay.mend()
        await daemon.stop(timeout=2)
        await relay.stop()


async def _delivered(channel: FakeChannel, text: str, chat: str) -> InboundMessage:
    """A message the platform delivers again while the store says it is unavailable."""
    while True:
        try:
            return await channel.say(text, chat=chat, message_id=f"{chat}-{text}")
        except StoreUnavailable:
            await asyncio.sleep(0.01)
