"""Every row of every PostgreSQL table, for ``bot store copy``
(see :class:`bot.store.base.Tables`).

Rows are written with ``COPY`` (asyncpg's binary copy: the fastest way in), each value
made the column's type first: SQLite stores what it is given, so an id may come as text.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from graphlib import TopologicalSorter
from typing import Any

from bot.store.postgres.database import PostgresDatabase

BATCH = 1_000
_VERSIONS = "schema_migrations"  # each backend keeps its own schema version
_TYPES: dict[str, Callable[[Any], Any]] = {
    "bigint": int,
    "integer": int,
    "double precision": float,
    "text": str,
}


class PgTables:
    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db

    async def names(self) -> list[str]:
        tables = await self._db.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            " AND tablename != $1 ORDER BY tablename",
            _VERSIONS,
        )
        references = await self._db.fetch(
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

    async def columns(self, table: str) -> list[str]:
        return list(await self._types(table))

    async def _types(self, table: str) -> dict[str, str]:
        rows = await self._db.fetch(
            "SELECT column_name, data_type FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position",
            table,
        )
        return {str(r["column_name"]): str(r["data_type"]) for r in rows}

    async def count(self, table: str) -> int:
        return int(await self._db.fetchval(f'SELECT COUNT(*) FROM "{table}"'))

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
        types = await self._types(table)
        casts = [_TYPES.get(types[c], _same) for c in columns]
        records = [
            tuple(None if v is None else cast(v) for cast, v in zip(casts, row, strict=True))
            for row in rows
        ]
        async with self._db.connection() as conn:
            await conn.copy_records_to_table(table, records=records, columns=list(columns))

    async def settle(self) -> None:
        """Every identity column's sequence moved past the largest id copied."""
        identities = await self._db.fetch(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND is_identity = 'YES'"
        )
        for col in identities:
            table, column = col["table_name"], col["column_name"]
            await self._db.execute(
                f"SELECT setval(pg_get_serial_sequence($1, $2),"
                f' COALESCE((SELECT MAX("{column}") FROM "{table}"), 0) + 1, false)',
                f'"{table}"',
                column,
            )


def _same(value: Any) -> Any:
    return value
