"""The SQLite connection and its versioned schema migrations.

One connection per daemon on a thread of its own, WAL mode, ``PRAGMA user_version`` as
the schema version.
Migrations only ever append: a database written by an older release upgrades in place.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import sqlite3
import stat
import threading
from collections.abc import Callable, Iterable, Sequence
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, TypeVar

from bot.errors import StoreError
from bot.messages import utcnow
from bot.store import schema
from bot.store.group import GroupCommit
from bot.store.holes import fill_holes
from bot.store.transaction import transaction
from bot.store.worker import DatabaseThread

log = logging.getLogger(__name__)

T = TypeVar("T")

HEALTH_PROBE_KEY = "health:probe"  # the row /healthz rewrites in the kv table
ID_BATCH = 500  # ids per statement in fetch_ids (SQLite's parameter cap is 32,766 or 999)


def load_migrations(directory: Traversable | None = None) -> tuple[str, ...]:
    """The schema migrations as SQLite runs them (:mod:`bot.store.schema`), in order."""
    return tuple(m.sql for m in schema.load(directory))


MIGRATIONS: tuple[str, ...] = tuple(m.sql for m in schema.MIGRATIONS)


class Database:
    """One SQLite connection with the schema at the latest version.

    Each operation (a statement with its fetch, or a whole transaction) is one hop to
    the database thread. aiosqlite hops once per cursor call (execute, fetch, close,
    commit: three or four per statement, each a thread wake-up and a loop wake-up); a
    turn runs about a dozen operations, so the hops were a tenth of its CPU. The small
    pieces of :meth:`run_together` run on the event loop's thread instead while the
    database thread is idle (:meth:`try_here`); one lock, held for a whole operation,
    keeps the two from ever interleaving on the connection. Checkpoints (copying the
    write-ahead log into the file, with an fsync) always run on the database thread.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None
        self._worker: DatabaseThread | None = None
        self._together: GroupCommit[Callable[[sqlite3.Connection], Any], Any] = GroupCommit(
            self, _run_work, durable=False, here=True
        )
        self._serial = threading.Lock()  # held by whichever thread uses the connection
        self._since_checkpoint = 0  # operations since the last checkpoint
        self._idle_lock = threading.Lock()
        self._idle_waiters: list[tuple[asyncio.AbstractEventLoop, Callable[[], None]]] = []
        self._identity: tuple[int, int] | None = None  # (st_dev, st_ino) of the file opened
        self._gone = ""  # why the file at path is no longer the one open; said once
        self._damage = ""  # SQLite's word for damaged pages an operation ran into
        self._damage_said = False

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError("database is not open")
        return self._conn

    async def run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """``work(connection)`` on the database thread; autocommit, so a statement
        commits on its own and several commit together inside ``with transaction(c)``."""
        return await self.submit(work)

    async def run_in_transaction(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """:meth:`run` with ``work`` whole in one transaction of its own (ROLLBACK when it
        raises), on the database thread: for writes of many rows, or a read of many rows
        together with a write."""
        return await self.run(functools.partial(_in_transaction, work=work))

    async def run_together(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """:meth:`run` for a small write (or a read of a few rows) that may share its
        commit: ``work`` runs inside one transaction with every such piece submitted in
        the same pass of the event loop (chats starting, answering and finishing at the
        same time), on the loop's thread while the database thread is idle, so ``work``
        must not open a transaction of its own nor read more than a few rows. Each piece
        is all or nothing: when the shared transaction fails, each runs again alone."""
        result: T = await self._together.submit(work)
        return result

    def submit(self, work: Callable[[sqlite3.Connection], T]) -> asyncio.Future[T]:
        """:meth:`run` for a caller that attaches a callback instead of awaiting (one
        task fewer); raises :class:`StoreError` at once when the database is closed."""
        conn = self.conn
        assert self._worker is not None
        return self._worker.submit(functools.partial(self._on_thread, work, conn))

    def try_here(self, work: Callable[[sqlite3.Connection], T]) -> tuple[T] | None:
        """``(work(connection),)`` run on the calling thread (the event loop's) when the
        database thread is idle; None when it holds the connection (the caller then
        waits for it to let go: :meth:`when_idle`). Only for small pieces that never
        fsync (see GroupCommit)."""
        conn, worker = self.conn, self._worker
        assert worker is not None
        if worker.cause is not None:
            raise StoreError(worker.cause)
        if not self._serial.acquire(blocking=False):
            return None
        try:
            result = work(conn)
            due = self._counted()
        except sqlite3.DatabaseError as exc:
            self._note_damage(exc)
            raise
        finally:
            self._serial.release()
        if due:  # on the database thread, never here: it fsyncs
            with contextlib.suppress(StoreError):  # closing: the close checkpoints
                job = worker.submit(
                    functools.partial(self._on_thread, _checkpoint, conn, count=False)
                )
                job.add_done_callback(_ignore_result)
        return (result,)

    def when_idle(self, loop: asyncio.AbstractEventLoop, callback: Callable[[], None]) -> None:
        """Call ``callback`` on ``loop`` (once) when the database thread next lets go of
        the connection; at once (next pass) when it already has, so no call is lost
        between a :meth:`try_here` that found it busy and this."""
        with self._idle_lock:
            self._idle_waiters.append((loop, callback))
        if not self._serial.locked():
            self._wake_idle()

    def _wake_idle(self) -> None:
        with self._idle_lock:
            waiting, self._idle_waiters = self._idle_waiters, []
        for loop, callback in waiting:
            with contextlib.suppress(RuntimeError):  # its loop is closed: nobody waits
                loop.call_soon_threadsafe(callback)

    def _on_thread(
        self, work: Callable[[sqlite3.Connection], T], conn: sqlite3.Connection, count: bool = True
    ) -> T:
        """Database thread: ``work`` holding the connection, then a checkpoint when due;
        whoever waits for the connection is told once it is free."""
        try:
            with self._serial:
                try:
                    return work(conn)
                except sqlite3.DatabaseError as exc:
                    self._note_damage(exc)
                    raise
                finally:
                    if count and self._counted():
                        _checkpoint(conn)
        finally:
            if self._idle_waiters:
                self._wake_idle()

    def _counted(self) -> bool:
        """One more operation; True when a checkpoint is due (the lock is held)."""
        self._since_checkpoint += 1
        if self._since_checkpoint < CHECKPOINT_EVERY:
            return False
        self._since_checkpoint = 0
        return True

    async def open(self) -> None:
        self._worker = DatabaseThread(name="sqlite")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = await self._worker.submit(functools.partial(_connect, self.path))
            self._identity, self._gone = _file_id(self.path), ""
            await self._migrate()
        except StoreError:
            await self.close()  # e.g. a newer schema: do not leak the connection
            raise
        except (OSError, sqlite3.Error) as exc:
            await self.close()
            raise StoreError(f"cannot open database {self.path}: {exc}") from exc

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        worker, self._worker = self._worker, None
        self._wake_idle()  # pieces waiting for the connection hear it is closed
        if worker is None:
            return
        try:
            if conn is not None and worker.cause is None:  # a dead thread closes nothing
                await worker.submit(functools.partial(self._on_thread, _close, conn, count=False))
        finally:
            worker.stop()

    async def schema_version(self) -> int:
        rows = await self.fetchall("PRAGMA user_version")
        return int(rows[0][0]) if rows else 0

    async def _migrate(self) -> None:
        current = await self.schema_version()
        if current > len(MIGRATIONS):
            raise StoreError(
                f"database schema version {current} is newer than this release "
                f"({len(MIGRATIONS)}); upgrade the daemon"
            )
        if current < len(MIGRATIONS):
            await self._run_migrations(current)
        # Steps early releases skipped under their number (bot/store/holes.py).
        await self.run(functools.partial(fill_holes, version=max(current, len(MIGRATIONS))))

    async def _run_migrations(self, current: int) -> None:
        # Every pending step in one transaction: all of them or none (a failed step leaves
        # the previous version whole), and one commit instead of one per step (a first
        # start creates every table: about 4 ms less before ready:).
        log.info(
            "migrating database %s from schema version %d to %d",
            self.path,
            current,
            len(MIGRATIONS),
        )
        steps = "\n".join(MIGRATIONS[current:])
        script = f"BEGIN;\n{steps}\nPRAGMA user_version = {len(MIGRATIONS)};\nCOMMIT;"
        await self.run(functools.partial(_run_script, script=script))

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement (committed) and return lastrowid."""
        return await self.run(lambda c: int(c.execute(sql, params).lastrowid or 0))

    async def execute_count(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement (committed) and return the rows it changed (0: ignored)."""
        return await self.run(lambda c: int(c.execute(sql, params).rowcount))

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """One statement over many rows, in one transaction."""
        batch = list(rows)
        if not batch:
            return

        await self.run_in_transaction(lambda c: c.executemany(sql, batch))

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        return await self.run(lambda c: c.execute(sql, params).fetchall())

    async def fetch_ids(self, sql: str, ids: Sequence[int]) -> list[sqlite3.Row]:
        """The rows of ``sql`` (``id IN ({})`` in it) for ``ids``, in id order, in one
        read: SQLite caps a statement's parameters, so at most ID_BATCH ids each."""

        def read(c: sqlite3.Connection) -> list[sqlite3.Row]:
            ordered = sorted(set(ids))
            return [
                row
                for at in range(0, len(ordered), ID_BATCH)
                for row in c.execute(
                    sql.format(",".join("?" * len(ordered[at : at + ID_BATCH]))) + " ORDER BY id",
                    ordered[at : at + ID_BATCH],
                )
            ]

        return await self.run(read) if ids else []

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Row | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def writable(self) -> bool:
        """Health probe: can we commit to the database file right now? It writes a row
        of the real file (a TEMP table would live in memory and pass on a full or
        locked disk). A file deleted or replaced under the daemon fails it too: SQLite
        goes on writing to the open, unlinked file, and all of it is lost at restart.
        False for those (each logged) and a closed database; a write SQLite refuses
        raises StoreError with its words ("database or disk is full"), for /healthz."""
        if not self._same_file() or self._damaged():
            return False
        try:
            await self.execute(
                "INSERT INTO kv (key, value) VALUES (?, ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (HEALTH_PROBE_KEY, utcnow().isoformat()),
            )
            return True
        except sqlite3.Error as exc:
            raise StoreError(str(exc)) from exc
        except StoreError:
            return False

    def _same_file(self) -> bool:
        """Whether ``path`` is still the file this connection opened; a change is
        logged once (and again once it would be back)."""
        if self._identity is None:
            return True
        now = _file_id(self.path)
        if now == self._identity:
            self._gone = ""
            return True
        gone = "was deleted" if now is None else "was replaced by another file"
        if gone != self._gone:
            self._gone = gone
            log.error(
                "database %s %s while the daemon runs: what it writes now is lost at "
                "restart; stop it and restore the file from a backup",
                self.path,
                gone,
            )
        return False

    def _note_damage(self, exc: sqlite3.DatabaseError) -> None:
        """Keep SQLite's report of damaged pages (any thread): at start only the pages
        read are checked (``PRAGMA quick_check`` reads every page: ~110 ms on a
        10,000-chat database, a third of the time to ready), so damage is found by the
        first operation that reads it, and /healthz says so from then on."""
        if getattr(exc, "sqlite_errorcode", None) in _DAMAGED:
            self._damage = self._damage or str(exc)

    def _damaged(self) -> bool:
        """Whether an operation ran into damaged pages; logged once."""
        if not self._damage:
            return False
        if not self._damage_said:
            self._damage_said = True
            log.error(
                "database %s is damaged (%s): stop the daemon and restore the file from "
                "a backup (or save what is left with sqlite3's .recover)",
                self.path,
                self._damage,
            )
        return True


_DAMAGED = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})


def _file_id(path: Path) -> tuple[int, int] | None:
    """The file at ``path`` as (device, inode); None when there is none."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


def sqlite_version(path: Path) -> int:
    """The schema version of the database at ``path``, opened read-only (nothing migrated)."""
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            return int(conn.execute("PRAGMA user_version").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read database {path}: {exc}") from exc


def _run_work(conn: sqlite3.Connection, work: Callable[[sqlite3.Connection], T]) -> T:
    return work(conn)


def _in_transaction(conn: sqlite3.Connection, work: Callable[[sqlite3.Connection], T]) -> T:
    with transaction(conn):
        return work(conn)


# Operations between checkpoints: SQLite's own automatic checkpoint would run in whichever
# thread commits, the event loop's included, so it is off and this takes its place (a
# turn commits about once; its default, 1,000 log pages, is a few hundred commits).
CHECKPOINT_EVERY = 200


def _checkpoint(conn: sqlite3.Connection) -> None:
    """Copy what the write-ahead log holds into the database file, as far as readers
    allow (PASSIVE never waits); a failure only leaves the log longer until the next.
    None inside a transaction (``bot store copy``'s, open across operations): SQLite
    refuses it there ("database table is locked")."""
    if conn.in_transaction:
        return
    try:
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    except sqlite3.Error:
        log.warning("database checkpoint failed; retried later", exc_info=True)


def _close(conn: sqlite3.Connection) -> None:
    conn.close()


def _ignore_result(job: asyncio.Future[Any]) -> None:
    if not job.cancelled() and job.exception() is not None:
        log.debug("checkpoint job failed", exc_info=job.exception())


def _run_script(conn: sqlite3.Connection, script: str) -> None:
    conn.executescript(script)


def _private(path: Path) -> None:
    """A database file (and its WAL) left readable by others, say by an older version or
    a command run under a loose umask, is made this user's alone: it holds the chats."""
    for part in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        try:
            mode = stat.S_IMODE(part.stat().st_mode)
            if mode & 0o077 and part.stat().st_uid == os.geteuid():
                part.chmod(mode & 0o700)
                log.info("%s was readable by other users (%s); made private", part, oct(mode))
        except OSError:
            continue  # not there (yet), or not ours to change


def _connect(path: Path) -> sqlite3.Connection:
    _private(path)
    # isolation_level=None: autocommit; transactions are explicit (``transaction``).
    # check_same_thread=False: small pieces may run on the event loop's thread, never at
    # the same time as the database thread (Database._serial).
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")  # Database checkpoints on its own thread
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=5000")
    return conn
