"""``bot skills list|enable|disable``: which skills a workspace offers, without a chat."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from bot.agent.skills.catalog import SkillCatalog
from bot.agent.skills.commands import skills_listing
from bot.cli.shared import ConfigOpt, fail, load_or_exit
from bot.errors import SkillError
from bot.workspaces.folders import DEFAULT_WORKSPACE

app = typer.Typer(no_args_is_help=True, help="The skills a workspace offers.")

WorkspaceOpt = Annotated[str, typer.Option("--workspace", "-w", help="workspace name")]


def _catalog(config: Path | None) -> SkillCatalog:
    return SkillCatalog(load_or_exit(config).data_dir / "workspaces")


@app.command("list")
def skills_list(config: ConfigOpt = None, workspace: WorkspaceOpt = DEFAULT_WORKSPACE) -> None:
    """Built-in and workspace skills, with their state and any file that failed to load."""
    typer.echo(skills_listing(_catalog(config), workspace))


def _toggle(config: Path | None, workspace: str, name: str, enabled: bool) -> None:
    try:
        state = _catalog(config).set_enabled(workspace, name, enabled)
    except SkillError as exc:
        raise fail(str(exc), 1) from None
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
