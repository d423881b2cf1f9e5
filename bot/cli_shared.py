"""What every CLI command shares and ``bot run`` needs too: the settings, or exit code 2.

Its own module so that ``bot run`` loads no admin sub-command (``bot memory``,
``bot skills``, ``bot workspace``, ``bot pairing``) on its way to ``ready:``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from bot.errors import ConfigError

if TYPE_CHECKING:
    from bot.config import Settings


def load_or_exit(config: Path | None) -> Settings:
    """The settings, or the config error on stderr and exit code 2."""
    from bot.config import load_settings  # pydantic: after ``bot run`` started its preload

    try:
        return load_settings(config)
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
