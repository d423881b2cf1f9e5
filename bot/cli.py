"""Command line: ``bot run``, ``chat``, ``init``, ``doctor``, ``memory``, ``skills``, ``mcp list``
(also ``python -m bot``)."""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Coroutine
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from bot import launch
from bot.cli_shared import load_or_exit
from bot.ops.loop import EventLoopChoice

# The admin groups: name -> (module, its Typer, help). Imported only when named.
SUBCOMMANDS: dict[str, tuple[str, str, str | None]] = {
    "memory": ("bot.manage", "memory_app", None),
    "skills": ("bot.manage", "skills_app", None),
    "workspace": ("bot.workspaces.cli", "app", "Show and edit workspace persona files."),
    "pairing": ("bot.cli_pairing", "pairing_app", None),
}


class _LazyGroup(TyperGroup):
    """Imports a sub-command group when it is invoked or the help lists it, so that
    ``bot run`` reaches ``ready:`` without loading what only the admin commands use."""

    def list_commands(self, ctx: Any) -> list[str]:
        return [*super().list_commands(ctx), *(n for n in SUBCOMMANDS if n not in self.commands)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in SUBCOMMANDS and cmd_name not in self.commands:
            module, attr, help_text = SUBCOMMANDS[cmd_name]
            group = typer.main.get_group(getattr(importlib.import_module(module), attr))
            group.name = cmd_name
            if help_text:
                group.help = help_text
            self.add_command(group, cmd_name)
        return super().get_command(ctx, cmd_name)


app = typer.Typer(cls=_LazyGroup, add_completion=False, no_args_is_help=True, help=__doc__)
log = logging.getLogger("bot")

ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", "-c", help="TOML config (default: $BOT_CONFIG, ./bot.toml)"),
]


_load = load_or_exit


@app.command()
def run(config: ConfigOpt = None) -> None:
    """Run the daemon: every configured channel, plus the terminal when interactive."""
    raise typer.Exit(launch.run(config))


@app.command()
def chat(config: ConfigOpt = None) -> None:
    """Chat in the terminal through the same pipeline (answers piped lines in order)."""
    launch.private_files()
    settings = _load(config)
    launch.setup_logging(settings.log_level, quiet=True)
    from bot.app import run_chat

    _run(run_chat(settings), settings.event_loop)


@app.command()
def init(
    config: Annotated[Path, typer.Option("--config", "-c")] = Path("bot.toml"),
    force: Annotated[bool, typer.Option(help="overwrite an existing config")] = False,
) -> None:
    """Write an example config and the workspace templates (never overwrites them)."""
    from bot.app import write_example_config
    from bot.workspaces.folders import Workspaces

    if config.exists() and not force:
        typer.echo(f"{config} exists; not overwritten (use --force)")
    else:
        write_example_config(config)
        typer.echo(f"wrote {config}")
    settings = _load(config)
    ws = Workspaces(settings.data_dir / "workspaces").ensure()
    typer.echo(f"workspace ready at {ws} (edit AGENTS.md, SOUL.md, USER.md)")


@app.command()
def doctor(config: ConfigOpt = None) -> None:
    """Check config, data dir, channel tokens, model and weather; exit 1 if any fails."""
    from bot.app import mcp_checks
    from bot.ops.doctor import exit_code, render, run_checks

    launch.setup_logging("CRITICAL")  # the table says it all; no retry warnings around it
    checks = asyncio.run(run_checks(config, mcp_checks))
    typer.echo(render(checks))
    raise typer.Exit(exit_code(checks))


mcp_app = typer.Typer(no_args_is_help=True, help="Model Context Protocol servers.")
app.add_typer(mcp_app, name="mcp")


@mcp_app.command("list")
def mcp_list(config: ConfigOpt = None) -> None:
    """Connect to each configured MCP server now; show its state and its tools' names."""
    settings = _load(config)
    launch.setup_logging("CRITICAL")
    from bot.app import mcp_list as listing

    typer.echo(asyncio.run(listing(settings)))


def _run(coro: Coroutine[Any, Any, int], loop: EventLoopChoice) -> None:
    raise typer.Exit(launch.finish(coro, loop))


def main() -> None:
    """The Typer app; the console script is :func:`bot.launch.main`, which hands every
    command line but a plain ``bot run`` to this."""
    app()
