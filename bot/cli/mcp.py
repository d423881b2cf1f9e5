"""``bot mcp list``: the configured Model Context Protocol servers and their tools."""

from __future__ import annotations

import asyncio

import typer

from bot.cli import process
from bot.cli.shared import ConfigOpt, load_or_exit

app = typer.Typer(no_args_is_help=True, help="Model Context Protocol servers.")


@app.command("list")
def mcp_list(config: ConfigOpt = None) -> None:
    """Connect to each configured MCP server now; show its state and its tools' names."""
    settings = load_or_exit(config)
    process.setup_logging("CRITICAL")
    from bot.app import mcp_list as listing

    typer.echo(asyncio.run(listing(settings)))
