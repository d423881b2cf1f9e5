"""What every Typer command shares: the ``--config`` option, the settings or exit code 2,
and the daemon's database opened for one piece of work.

Its own module so that each sub-command group need not import :mod:`bot.cli.app`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from bot.cli import process
from bot.errors import BotError

if TYPE_CHECKING:
    from bot.config import Settings
    from bot.store.base import Storage

T = TypeVar("T")

ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", "-c", help="TOML config (default: $BOT_CONFIG, ./bot.toml)"),
]


def load_or_exit(config: Path | None, *, data_dir: bool = False) -> Settings:
    """The settings (with ``data_dir``: their data folder made), or the config error on
    stderr and exit code 2."""
    settings = process.load(config, data_dir=data_dir)
    if settings is None:
        raise typer.Exit(2)
    return settings


def fail(message: str, code: int = 2) -> typer.Exit:
    """``error: message`` on stderr; raise the returned exit (2: a usage or config error)."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def with_storage(
    config: Path | None,
    work: Callable[[Settings, Storage], Awaitable[T]],
    *,
    refusal_exit: int = 1,
) -> T:
    """Open the daemon's store (``[store] url``; also while it runs: SQLite takes a
    second connection, PostgreSQL many), run ``work``, close it. A refusal (any
    BotError) is one line on stderr and ``refusal_exit``; a config error is exit code 2."""
    from bot.store.location import storage_for

    settings = load_or_exit(config, data_dir=True)

    async def run() -> T:
        store = settings.store
        storage = storage_for(
            store.url.get_secret_value(), settings.data_dir, max_connections=store.max_connections
        )
        await storage.backend.open()
        try:
            return await work(settings, storage)
        finally:
            await storage.backend.close()

    try:
        return asyncio.run(run())
    except BotError as exc:
        raise fail(str(exc), refusal_exit) from None
