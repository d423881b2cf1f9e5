"""``bot memory list|forget`` and ``bot skills list|enable|disable``: the admin's view of
what the assistant remembers and which skills a workspace offers, without a chat."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, TypeVar

import typer

from bot.agent.skills.catalog import SkillCatalog
from bot.agent.skills.commands import skills_listing
from bot.cli_shared import load_or_exit
from bot.config import Settings
from bot.errors import BotError, SkillError
from bot.store.base import Memory
from bot.store.db import Database
from bot.store.memory import MemoryStore
from bot.workspaces.folders import DEFAULT_WORKSPACE

T = TypeVar("T")

memory_app = typer.Typer(no_args_is_help=True, help="What the assistant remembers.")
skills_app = typer.Typer(no_args_is_help=True, help="The skills a workspace offers.")

ConfigOpt = Annotated[Path | None, typer.Option("--config", "-c", help="TOML config")]
WorkspaceOpt = Annotated[str, typer.Option("--workspace", "-w", help="workspace name")]


def with_database(
    config: Path | None,
    work: Callable[[Settings, Database], Awaitable[T]],
    *,
    refusal_exit: int = 1,
) -> T:
    """Open the daemon's database (also while it runs: SQLite takes a second connection),
    run ``work``, close it. A refusal (any BotError) is one line on stderr and
    ``refusal_exit``; a config error is exit code 2."""
    settings = load_or_exit(config)

    async def run() -> T:
        db = Database(settings.data_dir / "bot.db")
        await db.open()
        try:
            return await work(settings, db)
        finally:
            await db.close()

    try:
        return asyncio.run(run())
    except BotError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(refusal_exit) from None


def _with_memory(config: Path | None, job: Callable[[Memory], Awaitable[T]]) -> T:
    return with_database(config, lambda _settings, db: job(MemoryStore(db)))


@memory_app.command("list")
def memory_list(config: ConfigOpt = None, workspace: WorkspaceOpt = "") -> None:
    """Every remembered fact (all workspaces unless --workspace): id, scope, owner, fact."""
    facts = _with_memory(config, lambda m: m.all_facts(workspace or None))
    if not facts:
        typer.echo("no facts remembered")
    for f in facts:
        typer.echo(f"{f.id}\t{f.workspace}\t{f.scope.value}\t{f.owner}\t{f.text}")


@memory_app.command("forget")
def memory_forget(
    ids: Annotated[list[int], typer.Argument(help="fact ids as `bot memory list` shows them")],
    config: ConfigOpt = None,
) -> None:
    """Remove facts by id."""
    count = _with_memory(config, lambda m: m.remove(ids))
    typer.echo(f"forgot {count} fact{'s' if count != 1 else ''}")
    if count < len(set(ids)):
        raise typer.Exit(1)


def _catalog(config: Path | None) -> SkillCatalog:
    return SkillCatalog(load_or_exit(config).data_dir / "workspaces")


@skills_app.command("list")
def skills_list(config: ConfigOpt = None, workspace: WorkspaceOpt = DEFAULT_WORKSPACE) -> None:
    """Built-in and workspace skills, with their state and any file that failed to load."""
    typer.echo(skills_listing(_catalog(config), workspace))


def _toggle(config: Path | None, workspace: str, name: str, enabled: bool) -> None:
    try:
        state = _catalog(config).set_enabled(workspace, name, enabled)
    except SkillError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"skill {state.skill.name} {'enabled' if state.enabled else 'disabled'}")


@skills_app.command("enable")
def skills_enable(
    name: str, config: ConfigOpt = None, workspace: WorkspaceOpt = DEFAULT_WORKSPACE
) -> None:
    _toggle(config, workspace, name, True)


@skills_app.command("disable")
def skills_disable(
    name: str, config: ConfigOpt = None, workspace: WorkspaceOpt = DEFAULT_WORKSPACE
) -> None:
    _toggle(config, workspace, name, False)
