"""What every Typer command shares: the settings, or exit code 2.

Its own module so that the admin sub-commands (``bot memory``, ``bot skills``,
``bot workspace``, ``bot pairing``) need not import :mod:`bot.cli`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from bot import launch

if TYPE_CHECKING:
    from bot.config import Settings


def load_or_exit(config: Path | None) -> Settings:
    """The settings, or the config error on stderr and exit code 2."""
    settings = launch.load(config)
    if settings is None:
        raise typer.Exit(2)
    return settings
