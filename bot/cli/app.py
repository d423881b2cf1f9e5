"""The Typer app behind ``bot`` (the console script is :func:`bot.cli.launch.main`).

``run`` and ``chat`` live here; every other command or group is a module of this package
named in :data:`SUBCOMMANDS` and imported only when it is invoked or the help lists it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from bot.cli import process
from bot.cli.shared import ConfigOpt, load_or_exit

HELP = """A self-hosted chat assistant for your chat platforms and the terminal.

Start with `bot init`, then `bot doctor`, then `bot run`.
"""


@dataclass(frozen=True, slots=True)
class Sub:
    """A command (``group=False``: the module's Typer holds exactly one) or a group,
    found as ``app`` in ``module``."""

    module: str
    group: bool = True


# name -> where it lives. One line per command or group; imported only when named.
SUBCOMMANDS: dict[str, Sub] = {
    "init": Sub("bot.cli.init", group=False),
    "doctor": Sub("bot.cli.doctor", group=False),
    "status": Sub("bot.cli.status", group=False),
    "mcp": Sub("bot.cli.mcp"),
    "memory": Sub("bot.cli.memory"),
    "skills": Sub("bot.cli.skills"),
    "workspace": Sub("bot.cli.workspace"),
    "pairing": Sub("bot.cli.pairing"),
    "reminders": Sub("bot.cli.reminders"),
    "admin": Sub("bot.cli.admin"),
    "store": Sub("bot.cli.store"),
}


class _LazyGroup(TyperGroup):
    """Imports a command or group when it is invoked or the help lists it, so that
    ``bot run`` reaches ``ready:`` without loading what only the other commands use."""

    def list_commands(self, ctx: Any) -> list[str]:
        return [*super().list_commands(ctx), *(n for n in SUBCOMMANDS if n not in self.commands)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in SUBCOMMANDS and cmd_name not in self.commands:
            sub = SUBCOMMANDS[cmd_name]
            typer_app = importlib.import_module(sub.module).app
            build = typer.main.get_group if sub.group else typer.main.get_command
            command = build(typer_app)
            command.name = cmd_name
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)


app = typer.Typer(
    cls=_LazyGroup,
    add_completion=False,
    no_args_is_help=True,
    help=HELP,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"bot {version('chatbot-daemon')}")
        except PackageNotFoundError:  # a source tree that was never installed
            typer.echo("bot (version unknown: not installed)")
        raise typer.Exit()


@app.callback()
def _root(
    show_version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """The options before any command."""
    process.private_files()  # every command may make the data folder and its database


@app.command()
def run(config: ConfigOpt = None) -> None:
    """Run the daemon: every configured channel, plus the terminal when interactive."""
    raise typer.Exit(process.run(config))


@app.command()
def chat(config: ConfigOpt = None) -> None:
    """Chat in the terminal through the same pipeline (answers piped lines in order)."""
    settings = load_or_exit(config, data_dir=True)
    process.setup_logging(settings.log_level, quiet=True)
    from bot.app import run_chat

    raise typer.Exit(process.finish(run_chat(settings), settings.event_loop))


def main() -> None:
    """The Typer app; :func:`bot.cli.launch.main` hands it every command line but a plain
    ``bot run``."""
    app()
