"""The explicit transaction every multi-statement write runs in (database thread only)."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection, *, durable: bool = False) -> Iterator[None]:
    """BEGIN ... COMMIT around the block (ROLLBACK when it raises); database thread only.

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
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    finally:
        if durable:
            conn.execute("PRAGMA synchronous=NORMAL")
