"""What every Typer command shares: the ``--config`` option, the settings or exit code 2,
and the daemon's database opened for one piece of work.

Its own module so that each sub-command group need not import :mod:`bot.cli.app`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from bot.cli import process
from bot.errors import BotError, ConfigError, StoreError

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
    """``error: message`` on stderr (each line of it); raise the returned exit (2: a
    usage or config error)."""
    typer.echo(process.error_lines(message), err=True, nl=False)
    return typer.Exit(code)


def with_storage(
    config: Path | None,
    work: Callable[[Settings, Storage], Awaitable[T]],
    *,
    refusal_exit: int = 1,
    new_store: bool = False,
    files: bool = False,
) -> T:
    """Open the daemon's store (``[store] url``; also while it runs: SQLite takes a
    second connection, PostgreSQL many), run ``work``, close it. A refusal (any
    BotError) is one line on stderr and ``refusal_exit``; a config error is exit code 2.
    ``new_store``: the work may be the store's first (else one not found is refused).
    A store at an older schema is refused, not migrated (:func:`unmigrated`).
    ``files``: the work writes files in the data folder (:func:`owned_elsewhere`)."""
    from bot.store.location import storage_for

    settings = load_or_exit(config)  # once: its warnings (a deprecated key) are said once
    if not new_store and (missing := no_store(settings)) is not None:
        raise fail(missing)
    if files and (foreign := owned_elsewhere(settings.data_dir)) is not None:
        raise fail(foreign)
    try:
        process.make_data_dir(settings.data_dir)
    except ConfigError as exc:
        raise fail(str(exc)) from None

    async def run() -> T:
        url = settings.store.url.get_secret_value()
        if older := await unmigrated(url, settings.data_dir):
            raise StoreError(older)
        max_connections = settings.store.max_connections
        storage = storage_for(url, settings.data_dir, max_connections=max_connections)
        await storage.backend.open()
        try:
            return await work(settings, storage)
        finally:
            await storage.backend.close()

    try:
        return asyncio.run(run())
    except BotError as exc:
        raise fail(str(exc), refusal_exit) from None


def owned_elsewhere(data_dir: Path, euid: int | None = None) -> str | None:
    """Why root must not write files in ``data_dir``: the folder is another user's (the
    daemon's, as systemd's DynamicUser makes it), and a file root writes there (a persona
    version, the skills list; private, as every file the bot makes) its owner cannot
    read, so the daemon would lose the persona or the list. None: writing is fine."""
    euid = os.geteuid() if euid is None and hasattr(os, "geteuid") else euid
    try:
        owner = data_dir.stat().st_uid
    except OSError:  # not made yet: whoever makes it owns it
        return None
    if euid != 0 or owner == 0:
        return None
    return (
        f"{data_dir} is uid {owner}'s (the daemon's user): a file root wrote there, the "
        "daemon could not read; make this change in a chat command or on the admin page, "
        "or run the command as that user"
    )


def no_store(settings: Settings) -> str | None:
    """Why there is no store to open here, or None. A SQLite file missing with its whole
    data folder, named relative to the current directory, is another directory's: a
    relative ``data_dir`` is read from the current one, and opening it would make an
    empty database there (``bot admin link`` printed a link the daemon never accepts,
    ``bot reminders list`` said there were none)."""
    from bot.store.location import is_postgres, sqlite_path

    url = settings.store.url.get_secret_value()
    if is_postgres(url):
        return None
    path = sqlite_path(url, settings.data_dir)
    if path.is_absolute() or path.exists() or settings.data_dir.exists():
        return None
    return (
        f"no database at {path.absolute()}: data_dir '{settings.data_dir}' is read from "
        f"the current directory ({Path.cwd()}), where the daemon has not run; run this "
        "where the daemon runs, or set data_dir to an absolute path"
    )


async def unmigrated(url: str, data_dir: Path) -> str:
    """Why a one-shot command leaves the store at ``url`` alone (empty: it may open it).
    A schema older than this release's is migrated by ``bot run`` only: a command of a
    newer release run next to an older daemon migrated its live database, and that
    daemon's next start refused the newer schema (exit 2, a restart loop under
    systemd). A missing or empty store (version 0) is not refused."""
    from bot.store.location import describe, peek_version
    from bot.store.schema import MIGRATIONS

    version, latest = await peek_version(url, data_dir), len(MIGRATIONS)
    if not version or version >= latest:  # a newer one: the open refuses it
        return ""
    return (
        f"{describe(url, data_dir)}: schema version {version}, not read: the next start "
        f"(bot run) of this release migrates it to {latest}; a command does not, so an "
        "older daemon still running on it can start again"
    )
