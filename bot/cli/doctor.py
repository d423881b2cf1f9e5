"""``bot doctor``: check the config, the data folder, channel tokens, the model and the
other services; exit 1 if any check fails."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from bot.cli import process
from bot.cli.shared import ConfigOpt

app = typer.Typer()


@app.command()
def doctor(
    config: ConfigOpt = None,
    offline: Annotated[
        bool, typer.Option(help="skip the checks that need the internet (0 if the rest pass)")
    ] = False,
) -> None:
    """Check config, data dir, channel tokens, model and weather; exit 1 if any fails."""
    from bot.app import mcp_checks, tool_checks
    from bot.ops.doctor import exit_code, render, run_checks

    process.setup_logging("CRITICAL")  # the table says it all; no retry warnings around it
    checks = asyncio.run(run_checks(config, mcp_checks, offline=offline, notes=tool_checks))
    typer.echo(render(checks))
    raise typer.Exit(exit_code(checks))
