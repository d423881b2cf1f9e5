"""The PostgreSQL connection pool and its schema version.

asyncpg (see ARCHITECTURE.md for the choice): a pool of connections, each statement a
prepared one cached per connection. The tables live in the first schema of the URL's
``search_path`` (``?search_path=bot``; else the user's default, ``public``), so one
server can hold several bots, or a test's throwaway schema.

The schema version is the highest row of ``schema_migrations`` (one row per applied
migration, with its name and time). Every replica migrates at start; an advisory lock
held by the migrating transaction makes the others wait, then find nothing to do. DDL is
transactional in PostgreSQL: a failed step leaves the previous version whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import asyncpg

from bot.cluster import fence
from bot.errors import StoreError, StoreUnavailable
from bot.messages import utcnow
from bot.ops.redaction import masked_url
from bot.store import schema
from bot.store.base import POOL_SIZE
from bot.store.postgres.statements import bound, marked, reads, refusals
from bot.store.postgres.turnreads import TurnReads

log = logging.getLogger(__name__)

HEALTH_PROBE_KEY = "health:probe"  # the row /healthz rewrites in the kv table
_MIGRATION_LOCK = 0x626F74_6D6967  # pg_advisory_xact_lock key: b"bot" b"mig"
_VERSIONS = (
    "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY,"
    ' name TEXT COLLATE "C" NOT NULL, applied_at TEXT COLLATE "C" NOT NULL)'
)
# What a refused or failed connection raises (a bad URL is a ValueError).
_CONNECT_ERRORS = (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError, ValueError)
CONNECT_TIMEOUT_S = 10.0  # to connect and log in, before the server is called unreachable
Record = Any  # asyncpg.Record: indexed by column name like sqlite3.Row (bot.store.rows)
# What a connection the server dropped (a restart, a failover, pg_terminate_backend, a
# cut network) raises, or a new one it refuses while it starts or stops.
_LOST = (
    OSError,
    asyncpg.PostgresConnectionError,
    asyncpg.AdminShutdownError,
    asyncpg.CrashShutdownError,
    asyncpg.CannotConnectNowError,
)
# What to do about a schema the store may not prepare, by the server's refusal.
_SCHEMA_HINTS: dict[type[BaseException], str] = {
    asyncpg.InsufficientPrivilegeError: "the user needs CREATE on the schema",
    asyncpg.InvalidSchemaNameError: "create the schema ?search_path names, or fix the URL",
}
# What asyncpg says of a connection that read an error no operation waited for (a
# backend's FATAL notice on an idle connection): it refuses every later operation.
_REFUSED_STATE = "another operation (2) is in progress"
# A connection unused this long goes back to the pool, which closes it after as long
# again there (asyncpg's max_inactive_connection_lifetime): a burst's connections do not
# stay open, counted against the server's max_connections, until the replica stops.
IDLE_S = 60.0


class _Connection(asyncpg.Connection):  # type: ignore[misc]
    """A pool connection handed back without asyncpg's reset query (advisory unlock,
    CLOSE ALL, UNLISTEN *, RESET ALL): one more round trip for every acquire, a third of
    a turn's statements. The store leaves no session state on a pooled connection (no
    SET, LISTEN, session advisory lock or cursor outside a transaction), and asyncpg
    still rolls back a transaction left open before the connection goes back."""

    def get_reset_query(self) -> str:
        return ""


def commit_levels(url: str) -> tuple[dict[str, str], str]:
    """The pool's server settings and the journal's commit level: commits do not wait
    for the WAL flush, the journal's do (bot.store.postgres.statements); a URL that sets
    ``synchronous_commit`` itself decides both."""
    given = dict(parse_qsl(urlsplit(url).query)).get("synchronous_commit")
    if given is not None:
        return {}, given
    return {"synchronous_commit": "off"}, "on"


def safe_url(url: str) -> str:
    """``url`` without its password, for messages and logs: the one in its user info and
    the values of secret-bearing query keys (asyncpg and libpq also take ``?password=``
    and ``?sslpassword=``). The others stay, so that an operator sees which schema
    (``?search_path=``) or server setting is meant."""
    return masked_url(url)


class PostgresDatabase:
    """A pool of connections to one database, at the latest schema version once open."""

    def __init__(
        self, url: str, *, max_connections: int = POOL_SIZE, idle_s: float = IDLE_S
    ) -> None:
        self.url = url
        self._max = max_connections
        self._idle_s = idle_s
        self._pool: asyncpg.Pool | None = None
        self._settings, self._durable = commit_levels(url)
        # Connections lent by :meth:`connection`: the pool's, kept between statements,
        # each with when it was last handed back (oldest first: the newest is lent next).
        self._idle: list[tuple[asyncpg.Connection, float]] = []
        self._trim: asyncio.TimerHandle | None = None
        self._returning: set[asyncio.Task[None]] = set()
        self._slots = asyncio.Semaphore(max_connections)
        self.reads = TurnReads()  # what a turn's start read for the turn's readers
        self._lost = False  # the server dropped a connection; said once until one works

    @property
    def pool(self) -> asyncpg.Pool:
        if self._pool is None:
            raise StoreError("database is not open")
        return self._pool

    async def open(self) -> None:
        self._idle, self._slots = [], asyncio.Semaphore(self._max)  # this loop's
        try:
            self._pool = await asyncpg.create_pool(
                self.url,
                min_size=1,
                max_size=self._max,
                max_inactive_connection_lifetime=self._idle_s,
                timeout=CONNECT_TIMEOUT_S,
                connection_class=_Connection,
                server_settings=self._settings,
            )
        except (OSError, TimeoutError, asyncpg.PostgresError, ValueError) as exc:
            raise StoreError(cannot_connect(self.url, exc)) from exc
        try:
            await self._migrate()
        except asyncpg.PostgresError as exc:  # a lost connection is StoreUnavailable already
            await self.close()
            raise StoreError(unprepared(self.url, str(exc), type(exc))) from exc
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        idle, self._idle = self._idle, []
        if self._trim is not None:
            self._trim.cancel()
            self._trim = None
        if self._returning:
            await asyncio.gather(*self._returning, return_exceptions=True)
        if pool is not None:
            for conn, _ in idle:
                await pool.release(conn)
            await pool.close()

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[asyncpg.Connection]:
        """A connection of the pool for one piece of work (a statement, a transaction).

        Lent from connections kept between uses rather than through the pool's acquire
        and release: those cost the daemon more than the statement itself (a timeout
        wrapper, a task per release, a proxy), about 50 of a turn's statement's 90 us.
        At most ``max_connections`` are out at once (the pool's size: its acquire never
        waits on us); one handed back after an error, or inside a transaction, goes
        back through the pool, which rolls back, waits out a cancelled query or drops
        a closed connection."""
        pool = self.pool
        await self._slots.acquire()
        try:
            try:
                conn = self._kept() or await pool.acquire()
            except (*_LOST, TimeoutError) as exc:  # a connect timing out too
                raise self._unavailable(exc) from exc
            try:
                yield conn
            except BaseException as exc:
                if broken := _broken(conn, exc):
                    self._drop_kept(pool, conn)
                await pool.release(conn)
                if broken:
                    raise self._unavailable(exc) from exc
                raise
            if self._lost:
                self._lost = False
                log.warning("PostgreSQL answers again at %s", safe_url(self.url))
            if conn.is_closed() or conn.is_in_transaction() or self._pool is not pool:
                await pool.release(conn)
            else:
                self._idle.append((conn, time.monotonic()))
                if self._trim is None:
                    self._trim = asyncio.get_running_loop().call_later(
                        self._idle_s, self._return_unused
                    )
        finally:
            self._slots.release()

    def _unavailable(self, exc: BaseException) -> StoreUnavailable:
        """What a lost connection raises; logged once until a statement succeeds again
        (every caller retries: one line per outage, not one per retry)."""
        if not self._lost:
            self._lost = True
            log.warning(
                "PostgreSQL connection lost (%s: %s); retrying until it answers",
                type(exc).__name__,
                exc,
            )
        return StoreUnavailable(f"the database connection was lost: {exc}")

    def _kept(self) -> asyncpg.Connection | None:
        """The newest kept connection still open. One the server closed meanwhile (a
        restart, ``pg_terminate_backend``) was handed back to the pool by asyncpg itself,
        its proxy detached: lent, it would fail its statement, one failure per kept
        connection after every server restart."""
        while self._idle:
            conn = self._idle.pop()[0]
            if _open(conn):
                return conn
        return None

    def _drop_kept(self, pool: asyncpg.Pool, conn: asyncpg.Connection) -> None:
        """Close a connection found broken and those kept beside it (handed back to the
        pool, which reconnects them when next lent): a server that terminated one
        backend (a restart, a failover) terminated them all, and a connection that read
        its notice but not yet its end still says it is open."""
        kept, self._idle = [each for each, _ in self._idle], []
        for each in [conn, *kept]:
            with contextlib.suppress(asyncpg.InterfaceError):  # a proxy already detached
                each.terminate()
        if kept:
            self._hand_back(pool, kept)

    def _return_unused(self) -> None:
        """Hand the connections unused for ``idle_s`` back to the pool (which closes
        them once they stay unused there as long), and look again when the oldest left
        would be."""
        self._trim = None
        loop = asyncio.get_running_loop()
        pool, cutoff = self._pool, time.monotonic() - self._idle_s
        stale = 0
        while stale < len(self._idle) and self._idle[stale][1] <= cutoff:
            stale += 1
        unused, self._idle = self._idle[:stale], self._idle[stale:]
        if pool is not None and unused:
            self._hand_back(pool, [conn for conn, _ in unused])
        if self._idle:
            wait = self._idle[0][1] + self._idle_s - time.monotonic()
            self._trim = loop.call_later(max(wait, 0.0), self._return_unused)

    def _hand_back(self, pool: asyncpg.Pool, conns: list[asyncpg.Connection]) -> None:
        task = asyncio.create_task(_release_all(pool, conns))
        self._returning.add(task)
        task.add_done_callback(self._returning.discard)

    async def schema_version(self) -> int:
        """The version the database is at; 0 when no migration ever ran."""
        async with self.connection() as conn:
            return await _version(conn)

    async def _migrate(self) -> None:
        async with self.connection() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1)", _MIGRATION_LOCK)
            await conn.execute(_VERSIONS)
            current, latest = await _version(conn), len(schema.MIGRATIONS)
            if current > latest:
                raise StoreError(
                    f"database schema version {current} is newer than this release "
                    f"({latest}); upgrade the daemon"
                )
            if current == latest:
                return
            log.info(
                "migrating database %s from schema version %d to %d",
                safe_url(self.url),
                current,
                latest,
            )
            for step in schema.MIGRATIONS[current:]:
                await conn.execute(step.postgres)  # no arguments: several statements
                await conn.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
                    step.number,
                    step.name,
                    utcnow().isoformat(),
                )

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[asyncpg.Connection]:
        """One connection of the pool inside one transaction (rolled back on an error).
        Under a replica's fence (a chat's turn, bot/cluster) the lease is checked first,
        in the same transaction, so a replica that lost the chat commits nothing."""
        async with self.connection() as conn, conn.transaction():
            await fence.check(conn)
            yield conn

    async def fetch(self, sql: str, *args: Any) -> list[Record]:
        """Rows of a read, or of a write's ``RETURNING``: a write run under a fence must
        carry the FENCE mark (a plain fetch is taken for a read and checks nothing)."""
        if marked(sql):
            sql, args = bound(sql, args, self._durable)
        with refusals():
            async with self.connection() as conn:
                return list(await conn.fetch(sql, *args))

    async def fetchrow(self, sql: str, *args: Any) -> Record | None:
        async with self.connection() as conn:
            return await conn.fetchrow(sql, *args)

    async def fetchval(self, sql: str, *args: Any) -> Any:
        """One value; a write's (``UPDATE ... RETURNING``) under a fence is checked."""
        if marked(sql):
            sql, args = bound(sql, args, self._durable)
        elif fence.current() is not None and not reads(sql):
            async with self.transaction() as conn:
                return await conn.fetchval(sql, *args)
        with refusals():
            async with self.connection() as conn:
                return await conn.fetchval(sql, *args)

    async def execute(self, sql: str, *args: Any) -> int:
        """Run one statement; the rows it changed (0: none, e.g. a conflict ignored).

        Under a fence a statement is refused once the lease moved on: one that carries
        the FENCE mark in its ``WHERE`` checks it itself (one round trip: see
        bot.store.postgres.statements); any other runs in a transaction that checks the
        lease first (four)."""
        if marked(sql):
            sql, args = bound(sql, args, self._durable)
        elif fence.current() is not None:
            async with self.transaction() as conn:
                return changed(await conn.execute(sql, *args))
        with refusals():
            async with self.connection() as conn:
                return changed(await conn.execute(sql, *args))

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """One statement over many rows, in one transaction."""
        if rows:
            async with self.transaction() as conn:
                await conn.executemany(sql, rows)

    async def writable(self) -> bool:
        """Health probe: can a row be committed right now?"""
        try:
            await self.execute(
                "INSERT INTO kv (key, value) VALUES ($1, $2)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                HEALTH_PROBE_KEY,
                utcnow().isoformat(),
            )
            return True
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, StoreError):
            return False


def cannot_connect(url: str, exc: BaseException) -> str:
    """Why ``url`` could not be reached, in words: a timeout's own text is empty, and a
    server that accepts connections but never answers is not a wrong URL."""
    if isinstance(exc, TimeoutError):
        reason = (
            f"no answer within {CONNECT_TIMEOUT_S:g} s (the server, or a proxy or pooler in"
            " front of it, accepted the connection but did not answer)"
        )
    else:
        reason = str(exc) or type(exc).__name__
    return f"cannot connect to PostgreSQL at {safe_url(url)}: {reason}"


async def peek_version(url: str) -> int:
    """The schema version at ``url``, read over one connection without migrating; a
    StoreError, as the start would raise, when it needs migrating but cannot be (no
    schema of the search_path exists, or the user may not create tables in it)."""
    try:
        conn = await asyncpg.connect(url, timeout=CONNECT_TIMEOUT_S)
    except _CONNECT_ERRORS as exc:
        raise StoreError(cannot_connect(url, exc)) from exc
    try:
        version = await _version(conn)
        if version < len(schema.MIGRATIONS):
            await _can_migrate(conn, url)
        return version
    finally:
        await conn.close()


async def _can_migrate(conn: asyncpg.Connection, url: str) -> None:
    name, may = await conn.fetchrow(
        "SELECT current_schema(), has_schema_privilege(current_schema(), 'CREATE')"
    )
    if name is None:
        raise StoreError(
            unprepared(
                url, "no schema has been selected to create in", asyncpg.InvalidSchemaNameError
            )
        )
    if not may:
        raise StoreError(
            unprepared(
                url, f"permission denied for schema {name}", asyncpg.InsufficientPrivilegeError
            )
        )


def unprepared(url: str, reason: str, kind: type[BaseException]) -> str:
    """One line for a schema the store cannot create or migrate, with what to do."""
    hint = _SCHEMA_HINTS.get(kind)
    return f"cannot prepare the schema at {safe_url(url)}: {reason}" + (
        f" ({hint})" if hint else ""
    )


def changed(status: str) -> int:
    """The row count of a command status such as ``INSERT 0 1`` or ``DELETE 3``."""
    count = status.rsplit(" ", 1)[-1]
    return int(count) if count.isdigit() else 0


def _broken(conn: asyncpg.Connection, exc: BaseException) -> bool:
    """Whether ``exc`` says the server dropped ``conn``, rather than a slow statement (a
    timeout) or a mistake of the caller's (asyncpg's other InterfaceErrors, which leave
    the connection usable). A backend terminated while its connection sat idle sends
    its FATAL notice before closing: asyncpg, between the two, keeps the connection
    "open" but in a state that refuses every operation ("cannot switch to state 12;
    another operation (2) is in progress", or "the underlying connection is closed"
    once the end arrived mid-transaction)."""
    if isinstance(exc, TimeoutError):
        return False
    if isinstance(exc, _LOST):
        return True
    if not isinstance(exc, (asyncpg.InterfaceError, asyncpg.InternalClientError)):
        return False
    return not _open(conn) or (
        isinstance(exc, asyncpg.InternalClientError) and _REFUSED_STATE in str(exc)
    )


def _open(conn: asyncpg.Connection) -> bool:
    try:
        return not conn.is_closed()
    except asyncpg.InterfaceError:  # a proxy asyncpg detached: its connection is gone
        return False


async def _release_all(pool: asyncpg.Pool, conns: list[asyncpg.Connection]) -> None:
    for conn in conns:
        try:
            await pool.release(conn)
        except Exception:  # a connection the server dropped meanwhile: the pool's to mend
            log.debug("releasing an unused connection failed", exc_info=True)


async def _version(conn: asyncpg.Connection) -> int:
    exists = await conn.fetchval("SELECT to_regclass('schema_migrations') IS NOT NULL")
    if not exists:
        return 0
    return int(await conn.fetchval("SELECT COALESCE(MAX(version), 0) FROM schema_migrations"))
