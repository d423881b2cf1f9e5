"""``bot init``: write an example config and the workspace templates."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from bot.cli.shared import fail, load_or_exit

app = typer.Typer()


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
        try:
            write_example_config(config)
        except OSError as exc:
            folder = config.parent if not config.parent.is_dir() else None
            fix = f"create {folder} first" if folder else "check the folder's permissions"
            raise fail(
                f"cannot write {config} ({exc.strerror}); {fix} or pass another --config"
            ) from None
        typer.echo(f"wrote {config}")
    settings = load_or_exit(config, data_dir=True)
    ws = Workspaces(settings.data_dir / "workspaces").ensure()
    typer.echo(f"workspace ready at {ws} (edit AGENTS.md, SOUL.md, USER.md)")
