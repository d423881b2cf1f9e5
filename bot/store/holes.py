"""Schema steps that early SQLite databases skipped although their version says otherwise.

``PRAGMA user_version`` counts the migrations a database ran, and two stretches of
main's history ran something else under a number:

- migration 0003 (reminders) was first released without its ``source`` column and
  unique index, then edited the same day (2026-11-29), so a database made in between
  is at version 3 or 4 with no ``reminders.source``: every new reminder failed;
- while three branches were open (2026-12-01) main shipped ``SELECT 1`` placeholders
  for 0006-0008, the numbers those branches had taken. A database first opened then
  counts them as run and never runs the real ones: no ``inbox.attempts``,
  ``outbox.claimed_by``, workspace tables or ``reminders.workspace``, so
  ``bot reminders list``, ``bot status``, ``bot run`` and the rest stopped on
  "no such column".

Each hole is recognized by what it lacks (one column or table, all or nothing: the
skipped step would have added it) and filled with that step's own SQL, at every open:
a database that already went on to a later version still lacks it. Existing rows keep
their values; the new columns take the step's defaults. PostgreSQL stores came later
and never had these holes.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass

from bot.store import schema

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Hole:
    """``table.column`` (``column`` empty: the table itself) missing from a database past
    migration ``step``; ``sql`` adds it."""

    step: int
    table: str
    column: str
    sql: str
    why: str


def _step(number: int) -> str:
    return schema.MIGRATIONS[number - 1].sql


HOLES: tuple[Hole, ...] = (
    Hole(
        3,
        "reminders",
        "source",
        "ALTER TABLE reminders ADD COLUMN source TEXT;\n"
        "CREATE UNIQUE INDEX reminders_by_source ON reminders (source);",
        "migration 0003 as first released",
    ),
    Hole(6, "inbox", "attempts", _step(6), "migration 0006 ran as a placeholder"),
    Hole(7, "outbox", "claimed_by", _step(7), "migration 0007 ran as a placeholder"),
    Hole(8, "persona_versions", "", _step(8), "migration 0008 ran as a placeholder"),
)


def _present(conn: sqlite3.Connection) -> set[tuple[str, str]]:
    """``(table, "")`` and ``(table, column)`` for every table the holes name that exists
    (one small query per table: about 70 µs in all, at every open)."""
    present: set[tuple[str, str]] = set()
    for table in sorted({hole.table for hole in HOLES}):
        columns = {
            str(r[0]) for r in conn.execute("SELECT name FROM pragma_table_info(?)", (table,))
        }
        present |= {(table, c) for c in columns} | ({(table, "")} if columns else set())
    return present


def fill_holes(conn: sqlite3.Connection, version: int) -> list[Hole]:
    """Run the SQL of every hole this database at schema ``version`` has, in one transaction (a
    failure leaves it as it was, and the open fails); the holes filled (none for a
    database made by a release with the real steps)."""
    present = _present(conn)
    missing = [
        hole for hole in HOLES if hole.step <= version and (hole.table, hole.column) not in present
    ]
    if not missing:
        return []
    steps = "\n".join(hole.sql for hole in missing)
    conn.executescript(f"BEGIN;\n{steps}\nCOMMIT;")  # as the migrations run: all or none
    for hole in missing:
        where = f"{hole.table}.{hole.column}" if hole.column else f"table {hole.table}"
        log.warning("database lacked %s (%s): added, every row kept", where, hole.why)
    return missing
