"""Moving a whole store to another backend (``bot store copy``): every table, ids kept.

Table by table in reference order (sessions before the messages that point at them), in
batches, through :class:`bot.store.base.Tables`; tables a later migration adds come
along without a change here. The target must be empty (its schema is made by opening
it): a copy never merges into data it would have to reconcile. Each table's rows are
counted on both sides afterwards, and a difference is an error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.errors import StoreError
from bot.store.base import Storage


@dataclass(frozen=True, slots=True)
class CopiedTable:
    name: str
    rows: int


async def refuse_non_empty(target: Storage) -> None:
    """StoreError naming a table of ``target`` that holds rows."""
    for table in await target.tables.names():
        if await target.tables.count(table):
            raise StoreError(
                f"the target is not empty (table {table} has rows): copy into a new database"
            )


async def copy_store(
    source: Storage, target: Storage, report: Callable[[CopiedTable], None]
) -> list[CopiedTable]:
    """Every row of ``source`` into the empty ``target`` (both open); ``report`` hears
    each table once its counts agree."""
    await refuse_non_empty(target)
    src, dst = source.tables, target.tables
    known = set(await dst.names())
    copied: list[CopiedTable] = []
    for table in await src.names():
        if table not in known:
            raise StoreError(f"the target has no table {table}: upgrade the daemon that made it")
        columns = await src.columns(table)
        moved = 0
        async for batch in src.read(table, columns):
            await dst.write(table, columns, batch)
            moved += len(batch)
        counts = (await src.count(table), await dst.count(table))
        if counts != (moved, moved):
            raise StoreError(
                f"{table}: {counts[0]} rows in the source, {moved} read, {counts[1]} in the"
                " target (was the daemon running on the source?)"
            )
        copied.append(CopiedTable(table, moved))
        report(copied[-1])
    await dst.settle()
    return copied
