"""``bot skills list|enable|disable``: which skills a workspace offers, without a chat."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from bot.agent.skills.catalog import SkillCatalog
from bot.agent.skills.commands import skills_listing
from bot.cli import process
from bot.cli.shared import ConfigOpt, fail, load_or_exit, no_store, owned_elsewhere
from bot.errors import BotError, SkillError
from bot.workspaces.folders import DEFAULT_WORKSPACE, Workspaces, require_known

app = typer.Typer(no_args_is_help=True, help="The skills a workspace offers.")

WorkspaceOpt = Annotated[str, typer.Option("--workspace", "-w", help="workspace name")]


def _catalog(config: Path | None, workspace: str, *, writes: bool = False) -> SkillCatalog:
    """The catalog of ``workspace`` when it exists, in the daemon's data folder: a typo
    makes no workspace, a relative ``data_dir`` read elsewhere is refused (no disabled
    list written where the daemon never looks), and a data_dir that is a file is one line."""
    settings = load_or_exit(config)
    if (elsewhere := no_store(settings)) is not None:
        raise fail(elsewhere)
    if writes and (foreign := owned_elsewhere(settings.data_dir)) is not None:
        raise fail(foreign)
    try:
        process.make_data_dir(settings.data_dir)
        folders = Workspaces(settings.data_dir / "workspaces")
        require_known(folders, settings.workspaces.names(), workspace)
    except BotError as exc:  # ConfigError (data_dir), WorkspaceError (no such workspace)
        raise fail(str(exc)) from None
    return SkillCatalog(folders.root)


def _unreadable(exc: OSError) -> typer.Exit:
    return fail(f"{exc.filename}: {exc.strerror}", 1)


@app.command("list")
def skills_list(config: ConfigOpt = None, workspace: WorkspaceOpt = DEFAULT_WORKSPACE) -> None:
    """Built-in and workspace skills, with their state and any file that failed to load."""
    try:
        typer.echo(skills_listing(_catalog(config, workspace), workspace))
    except OSError as exc:
        raise _unreadable(exc) from None


def _toggle(config: Path | None, workspace: str, name: str, enabled: bool) -> None:
    try:
        state = _catalog(config, workspace, writes=True).set_enabled(workspace, name, enabled)
    except SkillError as exc:
        raise fail(str(exc), 1) from None
    except OSError as exc:
        raise _unreadable(exc) from None
    typer.echo(f"skill {state.skill.name} {'enabled' if state.enabled else 'disabled'}")


@app.command("enable")
def skills_enable(
    name: str, config: ConfigOpt = None, workspace: WorkspaceOpt = DEFAULT_WORKSPACE
) -> None:
    """Offer the skill NAME in the workspace again."""
    _toggle(config, workspace, name, True)


@app.command("disable")
def skills_disable(
    name: str, config: ConfigOpt = None, workspace: WorkspaceOpt = DEFAULT_WORKSPACE
) -> None:
    """Stop offering the skill NAME in the workspace."""
    _toggle(config, workspace, name, False)
