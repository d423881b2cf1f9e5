"""Every row of every SQLite table, for ``bot store copy`` (see :class:`bot.store.base.Tables`)."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Sequence
from graphlib import TopologicalSorter
from typing import Any

from bot.store.db import Database

BATCH = 1_000


class SqliteTables:
    def __init__(self, db: Database) -> None:
        self._db = db

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
        listed = ", ".join(f'"{c}"' for c in columns)
        marks = ", ".join("?" for _ in columns)
        await self._db.executemany(f'INSERT INTO "{table}" ({listed}) VALUES ({marks})', rows)

    async def settle(self) -> None:
        return None  # a row id is one past the largest present
