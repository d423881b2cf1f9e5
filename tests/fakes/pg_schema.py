"""A throwaway schema on the test PostgreSQL (``BOT_TEST_POSTGRES_URL``), created with the
cluster tables and dropped after the test; its URL puts every connection in it."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import AsyncIterator
from importlib import resources

import asyncpg
import pytest_asyncio

from bot.cluster.fence import Fence
from bot.cluster.leases import LeaseTable
from bot.store.base import Storage
from bot.store.postgres import postgres_storage

PG_URL = os.environ.get("BOT_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


def cluster_sql() -> str:
    """The cluster tables as the migrations leave them (0015, and 0020's config)."""
    files = resources.files("bot.store").joinpath("migrations")
    return "\n".join(
        files.joinpath(name).read_text() for name in ("0015_cluster.sql", "0020_replica_config.sql")
    )


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


@contextlib.asynccontextmanager
async def opened(url: str) -> AsyncIterator[Storage]:
    storage = postgres_storage(url)
    await storage.backend.open()
    try:
        yield storage
    finally:
        await storage.backend.close()


@pytest_asyncio.fixture
async def migrated_url() -> AsyncIterator[str]:
    """A fresh schema the store has migrated; its URL (``url = pg_schema.migrated_url``)."""
    async with empty_schema() as schema_url:
        async with opened(schema_url):
            pass
        yield schema_url


async def take(url: str, owner: str) -> Fence:
    """The chat's lease for ``owner`` (lapsed first, so another may take it at once)."""
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("UPDATE cluster_leases SET expires_ms = 0 WHERE name = 'chats:1'")
        token = (await LeaseTable(conn, owner, ttl_ms=60_000).take(["chats:1"], 1))["chats:1"]
    finally:
        await conn.close()
    return Fence("chats:1", owner, token)
