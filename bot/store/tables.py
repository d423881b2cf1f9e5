"""Every row of every SQLite table, for ``bot store copy`` (see :class:`bot.store.base.Tables`).

A copy's writes are one transaction (:meth:`SqliteTables.writing`), open across the
copy's operations on the database thread: nothing else writes to a copy's target.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import AsyncIterator, Sequence
from graphlib import TopologicalSorter
from typing import Any

from bot.errors import StoreError
from bot.store.copy import refused
from bot.store.db import Database

BATCH = 1_000


class SqliteTables:
    def __init__(self, db: Database) -> None:
        self._db = db
        self._writing = False  # inside the copy's transaction

    @contextlib.asynccontextmanager
    async def writing(self) -> AsyncIterator[None]:
        """One transaction for what runs inside: committed at the end, rolled back when
        it raises (the target as it was)."""
        await self._db.run(_begin)
        self._writing = True
        try:
            yield
        except BaseException:
            await self._db.run(_rollback)
            raise
        else:
            try:
                await self._db.run(_commit)
            except sqlite3.Error as exc:  # a full disk: nothing is kept
                await self._db.run(_rollback)
                raise StoreError(f"cannot commit the copy: {exc}; nothing was copied") from exc
        finally:
            self._writing = False

    async def names(self) -> list[str]:
        def work(c: sqlite3.Connection) -> dict[str, set[str]]:
            tables = [
                str(r[0])
                for r in c.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table'"
                    " AND name NOT LIKE 'sqlite_%' ORDER BY name"
                )
            ]
            return {
                t: {str(r["table"]) for r in c.execute(f'PRAGMA foreign_key_list("{t}")')}
                for t in tables
            }

        return list(TopologicalSorter(await self._db.run(work)).static_order())

    async def columns(self, table: str) -> list[str]:
        rows = await self._db.fetchall(f'PRAGMA table_info("{table}")')
        return [str(r["name"]) for r in rows]

    async def count(self, table: str) -> int:
        row = await self._db.fetchone(f'SELECT COUNT(*) FROM "{table}"')
        return int(row[0]) if row else 0

    async def read(
        self, table: str, columns: Sequence[str]
    ) -> AsyncIterator[list[tuple[Any, ...]]]:
        """Batches in row-id order, each read after the last row id seen (no OFFSET)."""
        listed = ", ".join(f'"{c}"' for c in columns)
        after = -(2**63)
        while True:
            rows = await self._db.fetchall(
                f'SELECT rowid, {listed} FROM "{table}" WHERE rowid > ? ORDER BY rowid LIMIT ?',
                (after, BATCH),
            )
            if not rows:
                return
            after = int(rows[-1][0])
            yield [tuple(r)[1:] for r in rows]

    async def write(
        self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]
    ) -> None:
        """``rows`` into ``table``; a StoreError naming the table for a row it refuses."""
        listed = ", ".join(f'"{c}"' for c in columns)
        marks = ", ".join("?" for _ in columns)
        sql = f'INSERT INTO "{table}" ({listed}) VALUES ({marks})'
        try:
            if self._writing:  # the copy's transaction holds them
                await self._db.run(lambda c: c.executemany(sql, rows))
            else:
                await self._db.executemany(sql, rows)
        except (sqlite3.Error, ValueError) as exc:  # ValueError: text with a lone surrogate
            raise refused(table, columns, rows, f"{exc}") from exc

    async def settle(self) -> None:
        return None  # a row id is one past the largest present


def _begin(c: sqlite3.Connection) -> None:
    c.execute("BEGIN IMMEDIATE")


def _commit(c: sqlite3.Connection) -> None:
    c.execute("COMMIT")


def _rollback(c: sqlite3.Connection) -> None:
    if c.in_transaction:  # SQLite rolls back on its own after some errors
        c.execute("ROLLBACK")
