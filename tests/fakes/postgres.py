"""The real PostgreSQL server of the test machine, one throwaway schema per use.

``BOT_TEST_POSTGRES_URL`` names the server (default: the local one, trust auth). Where
none answers, every test that needs it is skipped with one reason, which the summary
prints once (tests/conftest.py); with ``CI=true`` such a test fails instead, so CI never
passes without having run them.

Each test gets a schema of its own (``CREATE SCHEMA``, dropped after it) and a URL whose
``search_path`` names it: the backend creates its tables there, and the test's daemons,
CLI commands and subprocesses reach the same tables through that one URL. A schema is
cheaper than a database (no template copy, no connection to ``postgres`` to create it).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import uuid
from collections.abc import AsyncIterator, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import asyncpg
import pytest
import pytest_asyncio

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/test"
T = TypeVar("T")


def server_url() -> str:
    return os.environ.get("BOT_TEST_POSTGRES_URL") or DEFAULT_URL


def with_search_path(url: str, schema: str) -> str:
    """``url`` whose connections use ``schema`` (asyncpg passes unknown query parameters
    on as server settings)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "search_path"]
    return urlunsplit(parts._replace(query=urlencode([*query, ("search_path", schema)])))


def _run(work: Coroutine[Any, Any, T]) -> T:
    """``work`` to the end on a loop of its own (the caller may be inside a running one)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, work).result()


@functools.cache
def unreachable() -> str | None:
    """Why no test can use the server (None: it answers); asked once per run."""

    async def probe() -> None:  # connected and authenticated, not just a port open
        conn = await asyncpg.connect(server_url(), timeout=3)
        await conn.close()

    try:
        _run(probe())
    except (OSError, TimeoutError, asyncpg.PostgresError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def skip_reason() -> str:
    return f"no PostgreSQL at {server_url()} (set BOT_TEST_POSTGRES_URL)"


def require_server() -> str:
    """The server's URL, or skip the test (fail it under ``CI=true``)."""
    why = unreachable()
    if why is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true and {skip_reason()}: {why}", pytrace=False)
        pytest.skip(skip_reason())
    return server_url()


@contextlib.asynccontextmanager
async def throwaway_schema() -> AsyncIterator[str]:
    """A URL whose tables live in a new empty schema, dropped with them afterwards."""
    url = require_server()
    name = f"test_{uuid.uuid4().hex[:16]}"
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(f'CREATE SCHEMA "{name}"')
        try:
            yield with_search_path(url, name)
        finally:
            await conn.execute(f'DROP SCHEMA "{name}" CASCADE')
    finally:
        await conn.close()


_shared: list[str] = []  # the run's migrated schema, once made


def _migrated() -> str:
    """A schema migrated once per run (migrating takes about half a second): tests that
    need the tables but not the migration empty it instead (:func:`emptied_schema`)."""
    if not _shared:
        from bot.store.postgres.database import PostgresDatabase

        url = require_server()
        name = f"test_shared_{uuid.uuid4().hex[:12]}"

        async def make() -> None:
            conn = await asyncpg.connect(url)
            try:
                await conn.execute(f'CREATE SCHEMA "{name}"')
            finally:
                await conn.close()
            db = PostgresDatabase(with_search_path(url, name))
            await db.open()
            await db.close()

        _run(make())
        _shared.append(name)
    return with_search_path(require_server(), _shared[0])


async def emptied_schema() -> str:
    """A URL whose schema holds every table, all of them empty (rows of the test before
    deleted: much cheaper than a schema migrated anew)."""
    url = _migrated()
    conn = await asyncpg.connect(url)
    try:
        tables = await conn.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            " AND tablename != 'schema_migrations'"
        )
        deletes = "; ".join(f'DELETE FROM "{t["tablename"]}"' for t in tables)
        await conn.execute(deletes)  # one round trip; ON DELETE CASCADE covers the order
    finally:
        await conn.close()
    return url


def pytest_sessionfinish() -> None:
    """The run's shared schema goes with it."""
    if not _shared:
        return

    async def drop() -> None:
        conn = await asyncpg.connect(server_url())
        try:
            await conn.execute(f'DROP SCHEMA IF EXISTS "{_shared[0]}" CASCADE')
        finally:
            await conn.close()

    _run(drop())
    _shared.clear()


@pytest_asyncio.fixture
async def postgres_url() -> AsyncIterator[str]:
    """A URL on the test server whose tables live in a schema of this test's own."""
    async with throwaway_schema() as url:
        yield url


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line for every test skipped for want of a server, not one per test."""
    reason = skip_reason()
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if reason in str(r.longrepr)]
    if skipped:
        terminalreporter.write_line(
            f"PostgreSQL: {len(skipped)} tests skipped, {reason}; with CI=true they fail",
            yellow=True,
            bold=True,
        )
