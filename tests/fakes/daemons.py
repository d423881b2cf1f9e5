"""Daemons with the real platform adapters, built from config by their channel specs.

``build_daemon`` gets a factory that hands each configured platform to its spec's
factory (as a production start does), with ``extras`` shrinking the adapters' timers.
Every daemon started here is stopped after the test; ``restart`` stops one and starts
a new daemon on the same data dir and config::

    daemon = await platform_daemon({"slack": {...}}, extras={"slack": {...}})
    daemon = await platform_daemon.restart(daemon)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest_asyncio

from bot.agent.context import RUNTIME_HEADER
from bot.app import build_daemon, platform_channels
from bot.daemon import Daemon
from bot.store.postgres.database import PostgresDatabase
from channels.base import ChannelContext
from tests.conftest import make_settings
from tests.fakes.waiting import STEP_S


def asked(fake_llm: Any) -> list[str]:
    """What each model request was asked: its last user message, the runtime block cut."""
    return [
        r.json["messages"][-1]["content"].split("\n\n" + RUNTIME_HEADER)[0]
        for r in fake_llm.requests
    ]


async def channel_state_keys(daemon: Daemon) -> list[str]:
    """The keys adapters keep in the daemon's state store (what survives a restart), on
    SQLite or PostgreSQL."""
    sql = "SELECT key FROM kv ORDER BY key"
    db: Any = daemon.db
    rows = await (db.fetch(sql) if isinstance(db, PostgresDatabase) else db.fetchall(sql))
    return [str(r["key"]) for r in rows]


async def until_no_state_key(daemon: Daemon, part: str, timeout: float = STEP_S) -> None:
    """Until no state key holds ``part`` (an adapter forgets a mark after its platform
    call: an answer seen on the platform may come just before)."""
    async with asyncio.timeout(timeout):
        while [k for k in await channel_state_keys(daemon) if part in k]:  # noqa: ASYNC110
            await asyncio.sleep(0.01)


class PlatformDaemons:
    def __init__(self, tmp_path: Path, llm_url: str) -> None:
        self._tmp_path = tmp_path
        self._llm_url = llm_url
        self.started: list[Daemon] = []
        self._made: dict[int, tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = {}

    async def __call__(
        self,
        channels: dict[str, dict[str, Any]],
        *,
        extras: dict[str, Any] | None = None,
        data_dir: Path | None = None,
        **overrides: Any,
    ) -> Daemon:
        data = data_dir or self._tmp_path / "data"
        # The working signal at once: these tests check it is shown, not when.
        overrides.setdefault("agent", {"typing_after_s": 0})
        settings = make_settings(data, self._llm_url, channels=channels, **overrides)
        tuning = extras or {}

        def build(ctx: ChannelContext) -> list[Any]:
            return platform_channels(settings, replace(ctx, extras=tuning))

        daemon = build_daemon(settings, build)
        await daemon.start()
        self.started.append(daemon)
        self._made[id(daemon)] = (channels, tuning, {"data_dir": data, **overrides})
        return daemon

    async def restart(self, daemon: Daemon, **changes: Any) -> Daemon:
        """Stop ``daemon`` (unless stopped already) and start a new one on the same data
        dir and config (with ``changes``: these sections replaced)."""
        channels, tuning, rest = self._made[id(daemon)]
        if daemon.db._conn is not None:
            await daemon.stop(timeout=2)
        return await self(channels, extras=tuning, **{**rest, **changes})

    async def stop_all(self) -> None:
        for daemon in self.started:
            if daemon.state != "stopped":  # a test may have stopped it
                await daemon.stop(timeout=2)


@pytest_asyncio.fixture
async def platform_daemon(tmp_path: Path, fake_llm: Any) -> AsyncIterator[PlatformDaemons]:
    daemons = PlatformDaemons(tmp_path, fake_llm.url)
    yield daemons
    await daemons.stop_all()
