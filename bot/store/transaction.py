"""The explicit transaction every multi-statement write runs in (database thread only)."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from collections.abc import Iterator

log = logging.getLogger(__name__)


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection, *, durable: bool = False) -> Iterator[None]:
    """BEGIN ... COMMIT around the block (ROLLBACK when it or the COMMIT raises);
    database thread only.

    ``durable``: this commit is fsynced (``synchronous=FULL``) because a platform is
    acknowledged after it; the rest stay ``NORMAL``, which in WAL mode may lose the last
    commits on power loss but never corrupts. The work runs whole on the database thread,
    so a cancelled caller never leaves a transaction half done."""
    if durable:
        conn.execute("PRAGMA synchronous=FULL")
    try:
        conn.execute("BEGIN")
        try:
            yield
            conn.execute("COMMIT")
        except BaseException:
            _rollback(conn)
            raise
    finally:
        if durable:
            _restore_normal(conn)


def _rollback(conn: sqlite3.Connection) -> None:
    """ROLLBACK what is still open, never hiding the error that caused it.

    SQLite itself rolls the whole transaction back on some errors ("database or disk
    is full", an interrupt, out of memory): a ROLLBACK then fails with "no transaction
    is active", and raised here it would replace the real error in the log."""
    if not conn.in_transaction:
        return
    try:
        conn.execute("ROLLBACK")
    except sqlite3.Error as exc:
        log.warning("ROLLBACK after a failed write failed too: %s", exc)


def _restore_normal(conn: sqlite3.Connection) -> None:
    try:
        conn.execute("PRAGMA synchronous=NORMAL")
    except sqlite3.Error as exc:  # the error being raised matters more
        log.warning("cannot restore synchronous=NORMAL: %s", exc)
