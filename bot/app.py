"""Async entry points behind the CLI commands."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from bot.config import Settings
from bot.daemon import Daemon, install_signal_handlers
from bot.store.kv import KeyValueStore
from bot.workspaces.folders import template_text
from channels.base import Channel

log = logging.getLogger(__name__)


def platform_channels(settings: Settings) -> list[Channel]:
    """Every platform channel whose token is configured."""
    channels: list[Channel] = []
    if settings.channels.telegram.token.get_secret_value():
        from channels.telegram.adapter import TelegramChannel

        channels.append(TelegramChannel(settings.channels.telegram))
    wanted = {
        "slack": bool(settings.channels.slack.bot_token.get_secret_value()),
        "discord": bool(settings.channels.discord.token.get_secret_value()),
    }
    for name, on in wanted.items():
        if on:
            log.warning("channel %s is configured but not available in this build", name)
    return channels


@runtime_checkable
class _Stateful(Protocol):
    """A channel that keeps state across restarts (e.g. the Telegram polling offset)."""

    state: Any


def build_daemon(
    settings: Settings, channels: Sequence[Channel], *, serve_web: bool | None = None
) -> Daemon:
    """The daemon, with channels that keep state (polling offsets) bound to its store."""
    daemon = Daemon(settings, channels=channels, serve_web=serve_web)
    kv = KeyValueStore(daemon.db)
    for channel in channels:
        if isinstance(channel, _Stateful) and channel.state is None:
            channel.state = kv
    return daemon


async def run_daemon(settings: Settings, *, terminal: bool) -> int:
    from channels.cli import CLIChannel

    cli = CLIChannel(interactive=True) if terminal else None
    daemon = build_daemon(settings, [*([cli] if cli else []), *platform_channels(settings)])
    install_signal_handlers(daemon)
    await daemon.start()
    if cli is not None:
        await _first(daemon.wait_stopped(), cli.finished.wait())
    else:
        await daemon.wait_stopped()
    await daemon.stop()
    return 0


async def run_chat(settings: Settings) -> int:
    from channels.cli import CLIChannel

    cli = CLIChannel()
    # No /healthz here: a terminal session next to a running `bot run` must not clash.
    daemon = build_daemon(settings, [cli, *platform_channels(settings)], serve_web=False)
    install_signal_handlers(daemon)
    await daemon.start()
    await _first(daemon.wait_stopped(), cli.finished.wait())
    await daemon.stop()
    return 0


async def _first(*aws: Coroutine[Any, Any, Any]) -> None:
    tasks = [asyncio.ensure_future(a) for a in aws]
    _, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()


def write_example_config(path: Path) -> None:
    path.write_text(template_text("bot.example.toml"), encoding="utf-8")
