"""A full database reports "database or disk is full", never the ROLLBACK's own error.

SQLite rolls the whole transaction back itself when it runs out of pages; the full
database is made for real with ``PRAGMA max_page_count``."""

from __future__ import annotations

import logging
import sqlite3

import pytest

from bot.store.db import Database
from bot.store.transaction import transaction


def _fill(c: sqlite3.Connection) -> None:
    for n in range(1_000):
        c.execute("INSERT INTO big (blob) VALUES (?)", ("x" * 3_000 + str(n),))


async def _full(db: Database) -> None:
    await db.execute("CREATE TABLE big (blob TEXT)")
    await db.execute("CREATE INDEX big_blob ON big (blob)")
    pages = (await db.fetchall("PRAGMA page_count"))[0][0]
    await db.fetchall(f"PRAGMA max_page_count = {int(pages) + 2}")


async def test_a_full_database_reports_itself_full_in_a_transaction(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    await _full(db)
    with pytest.raises(sqlite3.OperationalError, match="database or disk is full") as raised:
        await db.run_in_transaction(_fill)
    assert raised.value.__context__ is None or "rollback" not in str(raised.value.__context__)
    assert "cannot rollback" not in caplog.text
    assert (await db.fetchall("SELECT count(*) FROM big"))[0][0] == 0  # all or nothing
    await db.fetchall("PRAGMA max_page_count = 1000000")
    assert await db.execute("INSERT INTO big (blob) VALUES (?)", ("small",))  # still usable


async def test_a_full_database_reports_itself_full_in_a_shared_commit(db: Database) -> None:
    await _full(db)
    with pytest.raises(sqlite3.OperationalError, match="database or disk is full"):
        await db.run_together(_fill)


async def test_a_full_database_reports_itself_full_in_a_durable_write(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    await _full(db)

    def durable(c: sqlite3.Connection) -> None:
        with transaction(c, durable=True):
            _fill(c)

    with caplog.at_level(logging.WARNING), pytest.raises(sqlite3.OperationalError, match="full"):
        await db.run(durable)
    assert "cannot rollback" not in caplog.text
