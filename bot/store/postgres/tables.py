"""Every row of every PostgreSQL table, for ``bot store copy``
(see :class:`bot.store.base.Tables`).

Rows are written with ``COPY`` (asyncpg's binary copy: the fastest way in), each value
made the column's type first: SQLite stores what it is given, so an id may come as text,
and a text may hold a NUL, which PostgreSQL refuses (it arrives as U+FFFD, as the daemon
stores one: :func:`bot.text.valid_unicode`). A copy's writes are one transaction on one
connection (:meth:`PgTables.writing`); a row the server refuses is a StoreError naming it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from graphlib import TopologicalSorter
from typing import Any

import asyncpg

from bot.store.copy import batch_line, refused
from bot.store.postgres.database import PostgresDatabase
from bot.text import valid_unicode

BATCH = 1_000
_VERSIONS = "schema_migrations"  # each backend keeps its own schema version
_TYPES: dict[str, Callable[[Any], Any]] = {
    "bigint": int,
    "integer": int,
    "double precision": float,
    "text": lambda value: valid_unicode(str(value)),
}
# A server gone or going: the connection's to report (StoreUnavailable), not a row's fault.
_LOST = (asyncpg.PostgresConnectionError, asyncpg.OperatorInterventionError)


class PgTables:
    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db
        self._conn: asyncpg.Connection | None = None  # the copy's, while writing

    @contextlib.asynccontextmanager
    async def writing(self) -> AsyncIterator[None]:
        """One connection and one transaction for what runs inside: committed at the
        end, rolled back when it raises (the target as it was)."""
        async with self._db.connection() as conn, conn.transaction():
            self._conn = conn
            try:
                yield
            finally:
                self._conn = None

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[asyncpg.Connection]:
        """The copy's connection while writing (its rows seen), else one of the pool."""
        if self._conn is not None:
            yield self._conn
            return
        async with self._db.connection() as conn:
            yield conn

    async def names(self) -> list[str]:
        async with self._connection() as conn:
            return await _names(conn)

    async def columns(self, table: str) -> list[str]:
        return list(await self._types(table))

    async def _types(self, table: str) -> dict[str, str]:
        async with self._connection() as conn:
            rows = await conn.fetch(
                "SELECT column_name, data_type FROM information_schema.columns"
                " WHERE table_schema = current_schema() AND table_name = $1"
                " ORDER BY ordinal_position",
                table,
            )
        return {str(r["column_name"]): str(r["data_type"]) for r in rows}

    async def count(self, table: str) -> int:
        async with self._connection() as conn:
            return int(await conn.fetchval(f'SELECT COUNT(*) FROM "{table}"'))

    async def read(
        self, table: str, columns: Sequence[str]
    ) -> AsyncIterator[list[tuple[Any, ...]]]:
        listed = ", ".join(f'"{c}"' for c in columns)
        async with self._db.transaction() as conn:
            batch: list[tuple[Any, ...]] = []
            async for record in conn.cursor(f'SELECT {listed} FROM "{table}"', prefetch=BATCH):
                batch.append(tuple(record))
                if len(batch) == BATCH:
                    yield batch
                    batch = []
            if batch:
                yield batch

    async def write(
        self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]
    ) -> None:
        """``rows`` into ``table``; a StoreError naming the table and the row (when the
        server said which) for a value it or its column's type refuses."""
        types = await self._types(table)
        casts = [_TYPES.get(types[c], _same) for c in columns]
        try:
            records = [
                tuple(None if v is None else cast(v) for cast, v in zip(casts, row, strict=True))
                for row in rows
            ]
            async with self._connection() as conn:
                await conn.copy_records_to_table(table, records=records, columns=list(columns))
        except _LOST:
            raise
        except asyncpg.PostgresError as exc:
            line = batch_line(getattr(exc, "context", None))  # str(exc) has its DETAIL
            raise refused(table, columns, rows, str(exc), line) from exc
        except (ValueError, TypeError) as exc:  # a cast, or a value the driver cannot send
            raise refused(table, columns, rows, f"{type(exc).__name__}: {exc}") from exc

    async def settle(self) -> None:
        """Every identity column's sequence moved past the largest id copied."""
        async with self._connection() as conn:
            identities = await conn.fetch(
                "SELECT table_name, column_name FROM information_schema.columns"
                " WHERE table_schema = current_schema() AND is_identity = 'YES'"
            )
            for col in identities:
                table, column = col["table_name"], col["column_name"]
                await conn.execute(
                    f"SELECT setval(pg_get_serial_sequence($1, $2),"
                    f' COALESCE((SELECT MAX("{column}") FROM "{table}"), 0) + 1, false)',
                    f'"{table}"',
                    column,
                )


async def _names(conn: asyncpg.Connection) -> list[str]:
    """The tables, each after those it references."""
    tables = await conn.fetch(
        "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        " AND tablename != $1 ORDER BY tablename",
        _VERSIONS,
    )
    references = await conn.fetch(
        "SELECT DISTINCT tc.table_name AS child, ccu.table_name AS parent"
        " FROM information_schema.table_constraints tc JOIN"
        " information_schema.constraint_column_usage ccu"
        " ON ccu.constraint_name = tc.constraint_name AND ccu.table_schema = tc.table_schema"
        " WHERE tc.constraint_type = 'FOREIGN KEY' AND tc.table_schema = current_schema()"
    )
    graph: dict[str, set[str]] = {str(t["tablename"]): set() for t in tables}
    for ref in references:
        graph[str(ref["child"])].add(str(ref["parent"]))
    return list(TopologicalSorter(graph).static_order())


def _same(value: Any) -> Any:
    return value
