"""The SQLite backend itself: WAL, migrations, reopening. The repositories' behaviour is
the contract suite's (test_storage_contract.py), run against every backend."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

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
    migrating = [r.getMessage() for r in caplog.records if "migrating" in r.getMessage()]
    assert migrating == [f"migrating database {path} from schema version 0 to {len(MIGRATIONS)}"]
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


async def test_pending_migrations_apply_together_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An older database gets every pending step in one transaction: a step that fails
    leaves it at its old version with nothing of the later steps, and a fixed release
    then upgrades it."""
    path = tmp_path / "bot.db"
    monkeypatch.setattr("bot.store.db.MIGRATIONS", MIGRATIONS[:2])
    old = Database(path)
    await old.open()
    await old.close()
    broken = [*MIGRATIONS[2:4], "CREATE TABLE half_done (x);\nNOT SQL AT ALL;"]
    monkeypatch.setattr("bot.store.db.MIGRATIONS", [*MIGRATIONS[:2], *broken])
    with pytest.raises(StoreError, match="cannot open database"):
        await Database(path).open()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert "half_done" not in tables and "reminders" not in tables
    monkeypatch.setattr("bot.store.db.MIGRATIONS", MIGRATIONS)
    fixed = Database(path)
    await fixed.open()
    try:
        assert await fixed.schema_version() == len(MIGRATIONS)
    finally:
        await fixed.close()


def test_migrations_are_numbered_files_in_order() -> None:
    folder = Path(__file__).parents[2] / "bot" / "store" / "migrations"
    names = sorted(p.name for p in folder.glob("*.sql") if not p.name.endswith(".postgres.sql"))
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


async def test_a_database_file_deleted_or_replaced_fails_the_probe(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    """SQLite writes on to the open, unlinked file: /healthz said "database: ok" while
    everything written was lost at the next start."""
    kept = db.path.with_name("kept.db")
    db.path.rename(kept)  # gone from its path (as deleted, but the test can put it back)
    with caplog.at_level(logging.ERROR, logger="bot.store.db"):
        assert not await db.writable()
        assert not await db.writable()
    assert [r.getMessage() for r in caplog.records] == [
        f"database {db.path} was deleted while the daemon runs: what it writes now is "
        "lost at restart; stop it and restore the file from a backup"
    ]
    db.path.write_bytes(kept.read_bytes())  # another file at the path
    assert not await db.writable()
    assert "was replaced by another file" in caplog.records[-1].getMessage()
    db.path.unlink()
    kept.rename(db.path)  # the very file back
    assert await db.writable()


async def test_damaged_pages_an_operation_reads_fail_the_probe(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A damaged table let the daemon start and report "database: ok" while every turn
    failed on it ("database disk image is malformed"); /healthz now says so."""
    path = tmp_path / "bot.db"
    first = Database(path)
    await first.open()
    await SessionStore(first).append(KEY, [{"role": "user", "content": "x" * 500}] * 50)
    row = await first.fetchone("SELECT rootpage FROM sqlite_master WHERE name = 'messages'")
    assert row is not None
    await first.close()
    page = 4096 * (int(row[0]) - 1)
    raw = bytearray(path.read_bytes())
    raw[page : page + 4096] = b"Z" * 4096
    path.write_bytes(bytes(raw))

    db = Database(path)
    await db.open()  # only the pages start-up reads are checked: not this table's
    try:
        assert await db.writable()
        with pytest.raises(sqlite3.DatabaseError, match="malformed"):
            await db.fetchall("SELECT * FROM messages")
        with caplog.at_level(logging.ERROR, logger="bot.store.db"):
            assert not await db.writable()
            assert not await db.writable()
        assert [r.getMessage() for r in caplog.records] == [
            f"database {path} is damaged (database disk image is malformed): stop the "
            "daemon and restore the file from a backup (or save what is left with "
            "sqlite3's .recover)"
        ]
    finally:
        await db.close()


async def test_data_persists_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "bot.db"
    messages = [{"role": "user", "content": "ünïcødé 🌦"}, {"role": "assistant", "content": "ok"}]
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
