"""The SQLite store: WAL, migrations, and verbatim per-chat history."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot.errors import StoreError
from bot.messages import ChatKey
from bot.store.db import MIGRATIONS, Database, load_migrations
from bot.store.sessions import SessionStore

KEY = ChatKey("telegram", "100")


@pytest_asyncio.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(tmp_path / "sub" / "bot.db")
    await database.open()
    yield database
    await database.close()


@pytest_asyncio.fixture
async def store(db: Database) -> SessionStore:
    return SessionStore(db)


# --- database ------------------------------------------------------------------------


async def test_wal_mode_is_on(db: Database) -> None:
    row = await db.fetchone("PRAGMA journal_mode")
    assert row is not None
    assert str(row[0]).lower() == "wal"


async def test_open_creates_parent_dir_and_migrates(db: Database) -> None:
    assert db.path.exists()
    assert len(MIGRATIONS) >= 1
    assert await db.schema_version() == len(MIGRATIONS)
    tables = {r["name"] for r in await db.fetchall("SELECT name FROM sqlite_master")}
    assert {"sessions", "messages"} <= tables


async def test_reopen_does_not_rerun_migrations(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "bot.db"
    first = Database(path)
    with caplog.at_level(logging.INFO, logger="bot.store.db"):
        await first.open()
    assert sum("migrating" in r.getMessage() for r in caplog.records) == len(MIGRATIONS)
    await first.close()

    caplog.clear()
    second = Database(path)
    with caplog.at_level(logging.INFO, logger="bot.store.db"):
        await second.open()  # would fail on "table sessions already exists" if re-run
    try:
        assert not [r for r in caplog.records if "migrating" in r.getMessage()]
        assert await second.schema_version() == len(MIGRATIONS)
    finally:
        await second.close()


def test_migrations_are_numbered_files_in_order() -> None:
    folder = Path(__file__).parents[2] / "bot" / "store" / "migrations"
    names = sorted(p.name for p in folder.glob("*.sql"))
    assert [int(n[:4]) for n in names] == list(range(1, len(MIGRATIONS) + 1))
    assert "CREATE TABLE sessions" in MIGRATIONS[0]


@pytest.mark.parametrize(
    ("files", "problem"),
    [
        ({"0001_a.sql": "", "0003_c.sql": ""}, "without gaps"),
        ({"0001_a.sql": "", "0001_b.sql": ""}, "two migrations"),
    ],
)
def test_misnumbered_migrations_are_refused(
    tmp_path: Path, files: dict[str, str], problem: str
) -> None:
    for name, sql in files.items():
        (tmp_path / name).write_text(sql)
    (tmp_path / "README.txt").write_text("ignored")
    with pytest.raises(StoreError, match=problem):
        load_migrations(tmp_path)


async def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    database = Database(path)
    with pytest.raises(StoreError, match="newer"):
        await database.open()
    # A failed open leaves nothing half-open.
    with pytest.raises(StoreError):
        _ = database.conn


async def test_unopenable_path_is_store_error(tmp_path: Path) -> None:
    folder = tmp_path / "is-a-dir.db"
    folder.mkdir()
    with pytest.raises(StoreError):
        await Database(folder).open()


async def test_conn_before_open_is_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="not open"):
        _ = Database(tmp_path / "x.db").conn


async def test_writable_probe(db: Database) -> None:
    assert await db.writable()


# --- sessions ------------------------------------------------------------------------


def sample_messages() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "what's the weather? ünïcødé 🌦"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
                },
                {
                    # Malformed call as a model may emit it: kept verbatim.
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": None, "arguments": "{not json at all"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "name": "weather", "content": "sunny"},
        {"role": "tool", "tool_call_id": "call_2", "name": "", "content": "Error: bad call"},
        {"role": "assistant", "content": ""},
    ]


async def test_append_history_round_trip_verbatim(store: SessionStore) -> None:
    messages = sample_messages()
    await store.append(KEY, messages)
    assert await store.history(KEY) == messages


async def test_history_round_trip_across_calls(store: SessionStore) -> None:
    messages = sample_messages()
    for m in messages:
        await store.append(KEY, [m])
    assert await store.history(KEY) == messages


async def test_append_nothing_is_a_noop(store: SessionStore) -> None:
    await store.append(KEY, [])
    assert await store.history(KEY) == []


async def test_non_string_content_is_stored_as_json(store: SessionStore) -> None:
    parts = [{"type": "text", "text": "hi"}]
    await store.append(KEY, [{"role": "user", "content": parts}])
    [msg] = await store.history(KEY)
    assert msg["content"] == '[{"type": "text", "text": "hi"}]'


async def test_sessions_are_separate_per_chat_key(store: SessionStore) -> None:
    keys = [
        ChatKey("telegram", "100"),
        ChatKey("telegram", "100", "7"),
        ChatKey("telegram", "100", "8"),
        ChatKey("telegram", "200"),
        ChatKey("slack", "100"),
    ]
    for i, key in enumerate(keys):
        await store.append(key, [{"role": "user", "content": f"msg {i}"}])
    ids = {await store.session_id(k) for k in keys}
    assert len(ids) == len(keys)
    for i, key in enumerate(keys):
        assert await store.history(key) == [{"role": "user", "content": f"msg {i}"}]


async def test_history_limit_returns_newest_oldest_first(store: SessionStore) -> None:
    await store.append(KEY, [{"role": "user", "content": str(i)} for i in range(10)])
    newest = await store.history(KEY, limit=3)
    assert [m["content"] for m in newest] == ["7", "8", "9"]
    assert [m["content"] for m in await store.history(KEY, limit=100)] == [
        str(i) for i in range(10)
    ]
    assert await store.history(KEY, limit=0) == []


async def test_clear_deletes_only_that_chat(store: SessionStore) -> None:
    other = ChatKey("telegram", "100", "thread")
    await store.append(KEY, [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])
    await store.append(other, [{"role": "user", "content": "keep"}])
    assert await store.clear(KEY) == 2
    assert await store.history(KEY) == []
    assert await store.raw_rows(KEY) == []
    assert await store.history(other) == [{"role": "user", "content": "keep"}]
    # Chat still usable after /new.
    await store.append(KEY, [{"role": "user", "content": "again"}])
    assert await store.history(KEY) == [{"role": "user", "content": "again"}]


async def test_data_persists_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "bot.db"
    messages = sample_messages()
    first = Database(path)
    await first.open()
    await SessionStore(first).append(KEY, messages)
    await first.close()

    second = Database(path)
    await second.open()
    try:
        assert await SessionStore(second).history(KEY) == messages
    finally:
        await second.close()
