"""`[store] max_connections`: how many connections a process keeps open to PostgreSQL,
and that a burst's connections are closed once unused (not held until the replica stops).

Replicas share one server whose own ``max_connections`` (100 by default) every replica's
pool counts against, so the pool's size is the operator's to choose. The counts here are
the server's own (``pg_stat_activity``), for connections tagged with a name of the test's.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from urllib.parse import urlencode

import asyncpg
import pytest

from bot.config import Settings, load_settings
from bot.errors import ConfigError
from bot.store.location import storage_for
from bot.store.postgres.database import PostgresDatabase

BURST = 12  # statements at once, more than the default pool holds


def tagged(url: str) -> tuple[str, str]:
    """``url`` whose connections carry a fresh ``application_name``, and that name."""
    name = f"pool-{uuid.uuid4().hex[:12]}"
    return f"{url}&{urlencode({'application_name': name})}", name


async def opened_by(url: str, name: str) -> int:
    conn = await asyncpg.connect(url)
    try:
        count: int = await conn.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", name
        )
        return count
    finally:
        await conn.close()


async def wait_opened(url: str, name: str, want: int, timeout: float = 20) -> int:
    """Polls the server until ``want`` connections of ``name`` are open (or the timeout)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while (count := await opened_by(url, name)) != want:
        if asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.05)
    return count


async def burst(db: PostgresDatabase, statements: int) -> None:
    async def slow(i: int) -> int:
        async with db.connection() as conn:
            value: int = await conn.fetchval("SELECT $1::int FROM pg_sleep(0.05)", i)
            return value

    assert await asyncio.gather(*(slow(i) for i in range(statements))) == list(range(statements))


async def burst_then_count(url: str, data_dir: Path, max_connections: int) -> int:
    """The server connections a store of ``max_connections`` holds after ``BURST``
    slow statements at once (all of them answered)."""
    tagged_url, name = tagged(url)
    storage = storage_for(tagged_url, data_dir, max_connections=max_connections)
    await storage.backend.open()
    try:

        async def slow(i: int) -> int:
            async with storage.backend.connection() as conn:  # type: ignore[attr-defined]
                value: int = await conn.fetchval("SELECT $1::int FROM pg_sleep(0.05)", i)
                return value

        assert await asyncio.gather(*(slow(i) for i in range(BURST))) == list(range(BURST))
        return await opened_by(url, name)
    finally:
        await storage.backend.close()


async def test_the_pool_opens_at_most_max_connections(tmp_path: Path, postgres_url: str) -> None:
    settings = Settings(data_dir=tmp_path, store={"url": postgres_url, "max_connections": 2})
    assert await burst_then_count(postgres_url, tmp_path, settings.store.max_connections) == 2
    # The same burst at the default grows the pool past that: the setting is what bounds it.
    default = Settings(data_dir=tmp_path).store.max_connections
    assert default == 10
    assert 2 < await burst_then_count(postgres_url, tmp_path, default) <= default


def test_max_connections_from_the_file_and_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert load_settings(None).store.max_connections == 10  # configs without the key load
    config = tmp_path / "bot.toml"
    config.write_text('[store]\nurl = "postgresql://bot@db/bot"\nmax_connections = 4\n')
    assert load_settings(config).store.max_connections == 4
    monkeypatch.setenv("BOT_STORE__MAX_CONNECTIONS", "6")
    assert load_settings(config).store.max_connections == 6


@pytest.mark.parametrize("bad", ["0", "-1", "many"])
def test_a_bad_max_connections_is_named(monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    monkeypatch.setenv("BOT_STORE__MAX_CONNECTIONS", bad)
    with pytest.raises(ConfigError) as caught:
        load_settings(None)
    assert "'store.max_connections'" in str(caught.value)
    assert "BOT_STORE__MAX_CONNECTIONS" in str(caught.value)


async def test_a_bursts_connections_are_closed_once_unused(postgres_url: str) -> None:
    url, name = tagged(postgres_url)
    db = PostgresDatabase(url, max_connections=4, idle_s=0.3)
    await db.open()
    try:
        await burst(db, BURST)
        assert await opened_by(postgres_url, name) == 4
        # Nothing uses them now: handed back to the pool, which closes all but the one
        # it keeps (its minimum size).
        assert await wait_opened(postgres_url, name, 1) == 1
        assert await db.fetch("SELECT 1 AS one") == [(1,)]
        assert await opened_by(postgres_url, name) == 1
    finally:
        await db.close()


async def test_a_connection_in_use_is_kept(postgres_url: str) -> None:
    """Work arriving more often than ``idle_s`` keeps its connection: the same server
    backend answers throughout (no reconnect per statement), and the burst's others go."""
    url, name = tagged(postgres_url)
    db = PostgresDatabase(url, max_connections=4, idle_s=0.3)
    await db.open()
    try:
        await burst(db, BURST)
        backends = set()
        for _ in range(30):  # 1.5 s of one statement every 50 ms, five idle windows
            rows = await db.fetch("SELECT pg_backend_pid() AS pid")
            backends.add(rows[0]["pid"])
            await asyncio.sleep(0.05)
        assert len(backends) == 1
        assert await wait_opened(postgres_url, name, 1) == 1
    finally:
        await db.close()
