"""What a turn reads on PostgreSQL, read by the statement that counts its start
(bot/store/postgres/turnreads.py): the turn's readers get what the database holds
without a statement of their own, only in the turn that counted it (its task, not one
it starts, under its fence, until its done mark), and a write of the same thing through
the store, from any of the turn's tasks, is read back at once. And the guard: a
Telegram turn through a daemon on PostgreSQL runs no more statements than it does now."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from bot.cluster import fence as fences
from bot.cluster.fence import Fence, fenced
from bot.messages import ChatKey, InboundMessage
from bot.store.base import Storage
from bot.store.memory import Scope, chat_owner, user_owner
from bot.store.postgres.database import PostgresDatabase
from bot.store.previews import PreviewRecord, turn_of
from tests.fakes import daemons, pg_schema, telegram_api
from tests.fakes.pg_schema import empty_schema, opened, take
from tests.fakes.waiting import until

fake_telegram = telegram_api.fake_telegram
platform_daemon = daemons.platform_daemon
url = pg_schema.migrated_url

KEY = ChatKey("telegram", "42")
MSG = InboundMessage(KEY, "u7", "hello", message_id="m1")
USER, CHAT = user_owner(KEY.channel, "u7"), chat_owner(KEY)
# A Telegram turn's statements under its chat's fence, but for delivery's claim and
# sent mark: the count of its start (with its reads), its start in the session, the
# answer, the reply queued, the speaker noted, the done mark. Was 9 (the time zone, the
# memory facts and the preview lookup each a statement of their own).
TURN_STATEMENTS = 6
TURNS = 4


@contextlib.contextmanager
def statements(db: PostgresDatabase) -> Any:
    """Counts the statements ``db`` runs in the block (every one borrows a connection)."""
    counted: list[int] = []
    lend = db.connection

    @contextlib.asynccontextmanager
    async def counting() -> AsyncIterator[Any]:
        counted.append(1)
        async with lend() as conn:
            yield conn

    db.connection = counting  # type: ignore[method-assign]
    try:
        yield counted
    finally:
        del db.connection


async def seeded(storage: Storage) -> None:
    await storage.user_settings.set_timezone(KEY.channel, "u7", "Europe/Berlin")
    await storage.previews.save(turn_of(MSG), KEY, "555")
    await storage.memory.add("default", Scope.USER, USER, "likes tea", "remember")
    await storage.memory.add("default", Scope.CHAT, CHAT, "plans a trip", "remember")
    # Learned about u7 in another group: shown only there, never read by this chat's turn.
    group = "telegram:-100"
    await storage.memory.add("default", Scope.USER, USER, "from a group", "cli", chat=group)
    await storage.inbox.accept(MSG)


async def turn_reads(storage: Storage) -> tuple[Any, ...]:
    user, chat = await storage.memory.facts_of_both("default", USER, CHAT)
    return (
        await storage.user_settings.timezone(KEY.channel, "u7"),
        await storage.previews.get(turn_of(MSG)),
        [f.text for f in user],
        [f.text for f in chat],
    )


async def test_a_turns_readers_get_what_its_start_read_without_a_statement(url: str) -> None:
    a = await take(url, "a")
    async with opened(url) as storage:
        await seeded(storage)
        await storage.memory.facts_of_both("default", USER, CHAT)  # the chat's workspace
        db = storage.backend
        assert isinstance(db, PostgresDatabase)
        with fenced(a):
            assert await storage.inbox.started(MSG) == 1
            with statements(db) as counted:
                read = await turn_reads(storage)
        assert counted == []
        assert read == ("Europe/Berlin", PreviewRecord("555"), ["likes tea"], ["plans a trip"])
        with fenced(a), statements(db) as counted:
            assert await asyncio.create_task(turn_reads(storage)) == read  # a task it starts
            assert len(counted) == 3  # reads for itself (a fold may outlive the turn)
            await storage.inbox.done(MSG)
            assert await turn_reads(storage) == read
        assert len(counted) == 3 + 1 + 3  # the done mark, then the readers' own


async def test_a_chats_first_turn_reads_its_facts_itself(url: str) -> None:
    async with opened(url) as storage:
        await seeded(storage)
        db = storage.backend
        assert isinstance(db, PostgresDatabase)
        await storage.inbox.started(MSG)
        with statements(db) as counted:
            read = await turn_reads(storage)
        assert counted == [1]  # the facts: no workspace known for the chat yet
        assert read[2:] == (["likes tea"], ["plans a trip"])


async def test_what_the_turn_writes_is_read_back_and_another_fence_reads_afresh(
    url: str,
) -> None:
    async with opened(url) as storage, opened(url) as other:
        await seeded(storage)
        await storage.memory.facts_of_both("default", USER, CHAT)
        a = await take(url, "a")
        with fenced(a):
            await storage.inbox.started(MSG)
            await storage.user_settings.set_timezone(KEY.channel, "u7", "Asia/Tokyo")
            await storage.previews.finalize(turn_of(MSG))
            await asyncio.create_task(  # a tool runs in a task of its own
                storage.memory.add("default", Scope.USER, USER, "hates rain", "remember")
            )
            assert await turn_reads(storage) == (
                "Asia/Tokyo",
                PreviewRecord("555", final=True),
                ["likes tea", "hates rain"],
                ["plans a trip"],
            )
            await storage.inbox.started(MSG)
        await other.user_settings.set_timezone(KEY.channel, "u7", "UTC")
        with fenced(Fence(a.lease, a.owner, a.token + 1)):  # the lease taken again
            assert (await turn_reads(storage))[0] == "UTC"
        assert fences.current() is None


def _turn_statement(record: Any, seen: Counter[str]) -> None:
    held = fences.current()
    if held is not None and held.lease.startswith("chats:"):
        query = " ".join(record.query.split())
        if not query.startswith("UPDATE outbox"):  # delivery's claim and sent mark
            seen[query[:60]] += 1


async def test_a_telegram_turn_on_postgresql_runs_no_more_statements_than_it_does_now(
    platform_daemon: Any, fake_telegram: Any, tmp_path: Path
) -> None:
    channels = {"telegram": fake_telegram.section()}
    async with empty_schema() as schema_url:
        daemon = await platform_daemon(channels, store={"url": schema_url})
        db = daemon.db
        assert isinstance(db, PostgresDatabase)
        seen: Counter[str] = Counter()
        logged: set[int] = set()
        lend = db.connection

        @contextlib.asynccontextmanager
        async def logging_lend() -> AsyncIterator[Any]:
            async with lend() as conn:
                if id(conn) not in logged:  # the logger runs in the statement's context
                    logged.add(id(conn))
                    conn.add_query_logger(lambda record: _turn_statement(record, seen))
                yield conn

        db.connection = logging_lend  # type: ignore[method-assign]
        first = 0  # the chat's first turn also finds its session and its facts' workspace
        for n in range(1, TURNS + 2):
            fake_telegram.message(f"m{n}", chat_id=101)
            await _turn_done(fake_telegram, seen, n)
            first = first or sum(seen.values())
        assert sum(seen.values()) - first <= TURN_STATEMENTS * TURNS, seen


async def _turn_done(fake_telegram: Any, seen: Counter[str], n: int) -> None:
    """Turn ``n`` answered, marked done and its speaker noted (after the turn)."""
    await until(lambda: len(fake_telegram.sent(101)) == n)
    await until(lambda: _counted(seen, "UPDATE inbox SET status") == n)
    await until(lambda: _counted(seen, "INSERT INTO memory_speakers") == n)


def _counted(seen: Counter[str], start: str) -> int:
    return sum(v for query, v in seen.items() if query.startswith(start))
