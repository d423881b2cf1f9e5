"""The SQLite connection and its versioned schema migrations.

One connection per daemon, WAL mode, ``PRAGMA user_version`` as the schema version.
Migrations only ever append: a database written by an older release upgrades in place.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import sqlite3
from collections.abc import AsyncIterator, Iterable, Sequence
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import aiosqlite

from bot.errors import StoreError
from bot.messages import utcnow

log = logging.getLogger(__name__)

MIGRATIONS_DIR = "migrations"
HEALTH_PROBE_KEY = "health:probe"  # the row /healthz rewrites in the kv table
_MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


def load_migrations(directory: Traversable | None = None) -> tuple[str, ...]:
    """The schema migrations, ``NNNN_name.sql`` in order; file N upgrades version N-1 to N.

    Numbered files rather than one list: a migration is added as one new file (never
    edited), and two branches adding one each collide on the number, not silently.
    """
    folder = directory or resources.files("bot.store").joinpath(MIGRATIONS_DIR)
    found: dict[int, str] = {}
    for entry in folder.iterdir():
        match = _MIGRATION_NAME.match(entry.name)
        if match is None:
            continue
        number = int(match.group(1))
        if number in found:
            raise StoreError(f"two migrations are numbered {number:04d}")
        found[number] = entry.read_text(encoding="utf-8")
    expected = list(range(1, len(found) + 1))
    if sorted(found) != expected:
        raise StoreError(f"migrations must be numbered 0001..{len(found):04d} without gaps")
    return tuple(found[n] for n in expected)


MIGRATIONS: tuple[str, ...] = load_migrations()


class Database:
    """An open aiosqlite connection with the schema at the latest version."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: aiosqlite.Connection | None = None
        self._lock = asyncio.Lock()

    @property
    def conn(self) -> aiosqlite.Connection:
        if self._conn is None:
            raise StoreError("database is not open")
        return self._conn

    async def open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = await aiosqlite.connect(self.path)
            self._conn.row_factory = sqlite3.Row
            await self._conn.execute("PRAGMA journal_mode=WAL")
            await self._conn.execute("PRAGMA synchronous=NORMAL")
            await self._conn.execute("PRAGMA foreign_keys=ON")
            await self._conn.execute("PRAGMA busy_timeout=5000")
            await self._migrate()
        except StoreError:
            await self.close()  # e.g. a newer schema: do not leak the connection
            raise
        except (OSError, sqlite3.Error) as exc:
            await self.close()
            raise StoreError(f"cannot open database {self.path}: {exc}") from exc

    async def close(self) -> None:
        if self._conn is not None:
            conn, self._conn = self._conn, None
            await conn.close()

    async def schema_version(self) -> int:
        async with self.conn.execute("PRAGMA user_version") as cur:
            row = await cur.fetchone()
        return int(row[0]) if row else 0

    async def _migrate(self) -> None:
        current = await self.schema_version()
        if current > len(MIGRATIONS):
            raise StoreError(
                f"database schema version {current} is newer than this release "
                f"({len(MIGRATIONS)}); upgrade the daemon"
            )
        for version in range(current, len(MIGRATIONS)):
            log.info("migrating database %s to schema version %d", self.path, version + 1)
            await self.conn.executescript(
                f"BEGIN;\n{MIGRATIONS[version]}\nPRAGMA user_version = {version + 1};\nCOMMIT;"
            )

    # Every operation below holds ``_lock`` from its statement through its commit or
    # its last fetch. One connection is shared by every coroutine, and aiosqlite runs
    # each call as a separate hop to its thread: without the lock, hops of concurrent
    # operations interleave on the connection, which under load failed about 1 % of
    # turns with "sqlite3.InterfaceError: bad parameter or other API misuse".

    @contextlib.asynccontextmanager
    async def transaction(self, *, durable: bool = False) -> AsyncIterator[aiosqlite.Connection]:
        """Statements that commit together or not at all (an error or a cancellation
        rolls back every one). ``durable``: this commit is fsynced (``synchronous=FULL``)
        because a platform is acknowledged after it; the rest stay ``NORMAL``, which in
        WAL mode may lose the last commits on power loss but never corrupts."""
        async with self._lock:
            conn = self.conn
            if durable:
                await conn.execute("PRAGMA synchronous=FULL")
            try:
                yield conn
                await conn.commit()
            except BaseException:
                with contextlib.suppress(sqlite3.Error, ValueError):  # ValueError: closed
                    await conn.rollback()
                raise
            finally:
                if durable:
                    with contextlib.suppress(sqlite3.Error, ValueError):
                        await conn.execute("PRAGMA synchronous=NORMAL")

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement, commit, and return lastrowid."""
        async with self.transaction() as conn, conn.execute(sql, params) as cur:
            rowid = cur.lastrowid
        return int(rowid or 0)

    async def execute_count(
        self, sql: str, params: Sequence[Any] = (), *, durable: bool = False
    ) -> int:
        """Run one statement, commit, and return the rows it changed (0: ignored)."""
        async with self.transaction(durable=durable) as conn, conn.execute(sql, params) as cur:
            count = cur.rowcount
        return int(count)

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """One statement over many rows in one transaction: all rows or none."""
        batch = list(rows)
        if not batch:
            return
        async with self.transaction() as conn:
            await conn.executemany(sql, batch)

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        async with self._lock, self.conn.execute(sql, params) as cur:
            rows = await cur.fetchall()
        return list(rows)

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Row | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def writable(self) -> bool:
        """Health probe: can we commit to the database file right now? It writes a row
        of the real file (a TEMP table would live in memory and pass on a full or
        locked disk)."""
        try:
            await self.execute(
                "INSERT INTO kv (key, value) VALUES (?, ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (HEALTH_PROBE_KEY, utcnow().isoformat()),
            )
            return True
        except (sqlite3.Error, StoreError):
            return False
