"""Moving a whole store to another backend (``bot store copy``): every table, ids kept.

Table by table in reference order (sessions before the messages that point at them), in
batches, through :class:`bot.store.base.Tables`; tables a later migration adds come
along without a change here. The target must be empty (its schema is made by opening
it): a copy never merges into data it would have to reconcile. Each table's rows are
counted on both sides afterwards, and a difference is an error.

All of it is one transaction of the target: a row it refuses (a value its driver cannot
take) stops the copy with one line naming the table, and leaves the target empty, so
that the copy can simply run again once the row is mended. (Committed table by table, a
failure left the tables before it filled, and every retry was refused as not empty.)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

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
    """Every row of ``source`` into the empty ``target`` (both open), all or none;
    ``report`` hears each table once its counts agree."""
    async with target.tables.writing():
        await refuse_non_empty(target)
        try:
            return await _copy_tables(source, target, report)
        except StoreError as exc:
            raise StoreError(f"{exc}; nothing was copied (the target is as it was)") from exc


async def _copy_tables(
    source: Storage, target: Storage, report: Callable[[CopiedTable], None]
) -> list[CopiedTable]:
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


def refused(
    table: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    reason: str,
    line: int | None = None,
) -> StoreError:
    """One line for a batch of ``rows`` the target refused: the table, the row's id
    (``line``: its place in the batch, 1 first, where the driver said) or the batch's
    ids, and the driver's reason."""
    where = ""
    if "id" in columns and rows:
        ids = [row[list(columns).index("id")] for row in rows]
        if line is not None and 0 < line <= len(ids):
            where = f" (row id {ids[line - 1]})"
        else:
            where = f" (row id {ids[0]})" if len(ids) == 1 else f" (ids {ids[0]} to {ids[-1]})"
    return StoreError(f"cannot copy table {table}{where}: {' '.join(reason.split())}")


def batch_line(context: str | None) -> int | None:
    """The batch's row a driver's error context names (PostgreSQL's ``COPY t, line 3``)."""
    found = re.search(r"\bline (\d+)", context or "")
    return int(found.group(1)) if found else None
