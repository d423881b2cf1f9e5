"""Which backend a store URL names, and its repositories.

``""`` is SQLite at ``data_dir/bot.db`` (the default: nothing else to run),
``sqlite:PATH`` a SQLite file elsewhere (``sqlite:///abs/path.db``, ``sqlite:rel.db``),
``postgresql://...`` (or ``postgres://``) a PostgreSQL server. The PostgreSQL package,
and asyncpg with it, is imported only when a URL names it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from bot.store.base import POOL_SIZE, Storage
from bot.store.db import Database, sqlite_version
from bot.store.sqlite import sqlite_storage

_POSTGRES = ("postgresql://", "postgres://")


def is_postgres(url: str) -> bool:
    return url.startswith(_POSTGRES)


def sqlite_path(url: str, data_dir: Path) -> Path:
    """The SQLite file of a URL that does not name PostgreSQL."""
    if not url:
        return data_dir / "bot.db"
    path = url.removeprefix("sqlite:")
    if path.startswith("///"):
        path = path[2:]
    return Path(path)


def describe(url: str, data_dir: Path) -> str:
    """The store for a person to read (never a password)."""
    if is_postgres(url):
        from bot.store.postgres.database import safe_url

        return safe_url(url)
    return f"sqlite:{sqlite_path(url, data_dir)}"


async def peek_version(url: str, data_dir: Path) -> int | None:
    """The schema version the store is at, read without migrating it (``bot doctor``);
    None when there is no SQLite file yet. Raises StoreError when it cannot be read."""
    if is_postgres(url):
        from bot.store.postgres.database import peek_version as postgres_version

        return await postgres_version(url)
    path = sqlite_path(url, data_dir)
    return sqlite_version(path) if path.exists() else None


def storage_for(
    url: str,
    data_dir: Path,
    sqlite: Callable[[Database], Storage] = sqlite_storage,
    *,
    max_connections: int = POOL_SIZE,
) -> Storage:
    """The repositories of the backend ``url`` names, not yet open (``backend.open``).
    ``sqlite`` builds them over a SQLite database (tests wrap it with faults);
    ``max_connections``: PostgreSQL's pool size (``[store] max_connections``)."""
    if is_postgres(url):
        from bot.store.postgres import postgres_storage
        from bot.store.postgres.database import PostgresDatabase

        return postgres_storage(PostgresDatabase(url, max_connections=max_connections))
    return sqlite(Database(sqlite_path(url, data_dir)))
