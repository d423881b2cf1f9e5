"""``bot memory list|forget``: the admin's view of what the assistant remembers, without
a chat."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, TypeVar

import typer

from bot.cli.shared import ConfigOpt, fail, with_storage
from bot.store.base import Memory

T = TypeVar("T")

app = typer.Typer(no_args_is_help=True, help="What the assistant remembers.")

WorkspaceOpt = Annotated[str, typer.Option("--workspace", "-w", help="workspace name")]


def _with_memory(config: Path | None, job: Callable[[Memory], Awaitable[T]]) -> T:
    return with_storage(config, lambda _settings, storage: job(storage.memory))


@app.command("list")
def memory_list(config: ConfigOpt = None, workspace: WorkspaceOpt = "") -> None:
    """Every remembered fact (all workspaces unless --workspace): id, workspace, scope,
    owner, fact, and where it is shown: the chat a user fact learned in a group stays in,
    else "-" (it follows its user, or it is a chat's)."""
    facts = _with_memory(config, lambda m: m.all_facts(workspace or None))
    if not facts:
        typer.echo("no facts remembered")
    for f in facts:
        where = f.chat or "-"
        typer.echo(f"{f.id}\t{f.workspace}\t{f.scope.value}\t{f.owner}\t{f.text}\t{where}")


@app.command("forget")
def memory_forget(
    ids: Annotated[list[int], typer.Argument(help="fact ids as `bot memory list` shows them")],
    config: ConfigOpt = None,
) -> None:
    """Remove facts by id, noted as forgotten (a fold of the turns that said one does
    not add it back)."""

    async def remove(memory: Memory) -> tuple[int, list[int]]:
        wanted = set(ids)
        facts = [f for f in await memory.all_facts(None) if f.id in wanted]
        return await memory.forget(facts), sorted(wanted - {f.id for f in facts})

    count, unknown = _with_memory(config, remove)
    typer.echo(f"forgot {count} fact{'s' if count != 1 else ''}")
    if unknown:
        listed = ", ".join(map(str, unknown))
        raise fail(f"no fact with id {listed}; `bot memory list` shows the ids", 1)
