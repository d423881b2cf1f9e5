"""A throwaway schema on the test PostgreSQL (``BOT_TEST_POSTGRES_URL``), created with the
cluster tables and dropped after the test; its URL puts every connection in it."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import AsyncIterator
from importlib import resources

import asyncpg

PG_URL = os.environ.get("BOT_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


def cluster_sql() -> str:
    return resources.files("bot.store").joinpath("migrations/0015_cluster.sql").read_text()


def in_schema(url: str, schema: str) -> str:
    """The URL with every connection's search_path in ``schema`` (asyncpg passes unknown
    query parameters on as server settings)."""
    return f"{url}{'&' if '?' in url else '?'}search_path={schema}"


@contextlib.asynccontextmanager
async def cluster_schema(url: str = PG_URL) -> AsyncIterator[str]:
    """A fresh schema holding the cluster tables; yields the URL that uses it."""
    schema = f"t_{secrets.token_hex(6)}"
    admin = await asyncpg.connect(url)
    try:
        await admin.execute(f"CREATE SCHEMA {schema}")
        await admin.execute(f"SET search_path = {schema}; {cluster_sql()}")
        yield in_schema(url, schema)
    finally:
        await admin.execute(f"DROP SCHEMA {schema} CASCADE")
        await admin.close()


@contextlib.asynccontextmanager
async def empty_schema(url: str = PG_URL) -> AsyncIterator[str]:
    """A fresh empty schema (a store opened on its URL migrates it); dropped after."""
    schema = f"t_{secrets.token_hex(6)}"
    admin = await asyncpg.connect(url)
    try:
        await admin.execute(f"CREATE SCHEMA {schema}")
        yield in_schema(url, schema)
    finally:
        await admin.execute(f"DROP SCHEMA {schema} CASCADE")
        await admin.close()
