"""What every command's process shares, with or without Typer: the log format, private
files, the settings or a one-line config error, and exit codes (2: a configuration or
usage error). ``bot run``'s start lives here: :mod:`bot.cli.launch` calls it for a plain
``bot run``, :mod:`bot.cli.app` for any other form of it.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.errors import BotError, ConfigError
from bot.ops.datadir import unwritable_fix
from bot.ops.loop import EventLoopChoice, run_on
from bot.ops.redaction import protect_logs

if TYPE_CHECKING:
    from bot.cli.instance import InstanceLock
    from bot.config import Settings

_NOISY = ("LiteLLM", "litellm", "httpx", "asyncpg", "asyncio", "apscheduler")


def setup_logging(level: str, quiet: bool = False) -> None:
    """One stderr format for every command; the chattiest libraries at WARNING."""
    logging.basicConfig(
        level=logging.WARNING if quiet else getattr(logging, level.upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    for noisy in _NOISY:
        logging.getLogger(noisy).setLevel(logging.WARNING)
    protect_logs()  # redaction (secrets are added once the daemon is built) and warnings


def private_files() -> None:
    """Files the daemon creates (bot.db, workspaces, offloaded results) hold chats and
    secrets: readable by this user only, whatever umask the shell or container passed."""
    os.umask(0o077)


def load(config: Path | None, *, data_dir: bool = False) -> Settings | None:
    """The settings (and, with ``data_dir``, their data folder made), or None after the
    config error was printed on stderr."""
    from bot.config import load_settings  # pydantic: after ``bot run`` started its preload

    try:
        settings = load_settings(config)
        if data_dir:
            make_data_dir(settings.data_dir)
    except ConfigError as exc:
        sys.stderr.write(error_lines(str(exc)))
        return None
    return settings


def error_lines(message: str) -> str:
    """``error: `` before each line of ``message`` (a config's problems are one a line)."""
    return "".join(f"error: {line}\n" for line in message.splitlines() or [""])


def make_data_dir(path: Path) -> None:
    """Create the data folder if missing; one that cannot be made or written is a config
    error naming whose folder refuses and the fix, not a traceback at start-up."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fix = unwritable_fix(path)
        raise ConfigError(f"data_dir {path}: cannot be created ({exc.strerror}); {fix}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ConfigError(f"data_dir {path}: not writable; {unwritable_fix(path)}")


def finish(coro: Coroutine[Any, Any, int], loop: EventLoopChoice) -> int:
    """Run a command's coroutine on the ``loop`` it names (bot/ops/loop.py) to its exit
    code: 2 for a :class:`BotError` (its one line on stderr), 0 for Ctrl-C."""
    try:
        return int(run_on(loop, coro) or 0)
    except BotError as exc:
        sys.stderr.write(error_lines(str(exc)))
        return 2
    except KeyboardInterrupt:
        return 0


def run(config: Path | None) -> int:
    """``bot run``: the daemon until it is stopped; its exit code."""
    from bot.ops import startup

    startup.pause_collector()  # until ready:
    startup.preload()  # while the settings are read
    private_files()
    settings = load(config, data_dir=True)
    if settings is None:
        return 2
    try:
        lock = _claim(settings)
    except ConfigError as exc:
        sys.stderr.write(error_lines(str(exc)))
        return 2
    setup_logging(settings.log_level)
    from bot.app import run_daemon

    try:
        return finish(run_daemon(settings, terminal=sys.stdin.isatty()), settings.event_loop)
    finally:
        if lock is not None:
            lock.release()


def _claim(settings: Settings) -> InstanceLock | None:
    """The data folder's lock when the store is SQLite (bot/cli/instance.py); replicas on
    PostgreSQL share their database by design."""
    from bot.cli.instance import claim
    from bot.store.location import is_postgres

    if is_postgres(settings.store.url.get_secret_value()):
        return None
    return claim(settings.data_dir)
