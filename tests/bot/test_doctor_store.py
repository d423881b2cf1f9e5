"""`bot doctor`'s store check: the backend answers, at a schema version this release runs.

It reads the version without migrating anything (a doctor run changes no database)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import asyncpg

from bot.config import Settings
from bot.ops.doctor import check_store
from bot.store.db import Database
from bot.store.postgres.database import PostgresDatabase
from bot.store.schema import MIGRATIONS

LATEST = len(MIGRATIONS)


async def test_sqlite_new_latest_older_and_newer(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    new = await check_store(settings)
    assert (new.status, new.detail) == (
        "ok",
        f"sqlite:{tmp_path / 'bot.db'} (new: created at the first start)",
    )
    assert not (tmp_path / "bot.db").exists()  # nothing made by looking
    db = Database(tmp_path / "bot.db")
    await db.open()
    await db.close()
    latest = await check_store(settings)
    assert latest.status == "ok" and latest.detail.endswith(f"schema version {LATEST} (latest)")
    with sqlite3.connect(tmp_path / "bot.db") as conn:
        conn.execute("PRAGMA user_version = 3")
    older = await check_store(settings)
    assert older.status == "ok" and f"version 3, migrated to {LATEST} at next start" in older.detail
    with sqlite3.connect(tmp_path / "bot.db") as conn:
        conn.execute(f"PRAGMA user_version = {LATEST + 1}")
    newer = await check_store(settings)
    assert newer.status == "failed" and "newer than this release" in newer.detail
    assert "upgrade the daemon" in newer.fix


async def test_postgres_empty_then_migrated_then_newer(tmp_path: Path, postgres_url: str) -> None:
    settings = Settings(data_dir=tmp_path, store={"url": postgres_url})
    empty = await check_store(settings)
    assert empty.status == "ok" and f"schema version 0, migrated to {LATEST}" in empty.detail
    db = PostgresDatabase(postgres_url)
    await db.open()
    await db.close()
    latest = await check_store(settings)
    assert latest.status == "ok" and latest.detail.endswith(f"schema version {LATEST} (latest)")
    assert latest.detail.startswith("postgresql://postgres@127.0.0.1")
    conn = await asyncpg.connect(postgres_url)
    try:
        await conn.execute(
            "INSERT INTO schema_migrations VALUES ($1, 'future', 'then')", LATEST + 1
        )
    finally:
        await conn.close()
    newer = await check_store(settings)
    assert newer.status == "failed" and "newer than this release" in newer.detail
